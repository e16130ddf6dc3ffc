# xllamacpp ships no types (a compiled module): the server parameters and the server
# judgements/llm/local/process.py starts a local model with, and the benchmarks beside it
# (bench/local_runtime.py, bench/local_runtimes.py), as its Cython source declares them.

from typing import Self

from typing_extensions import disjoint_base

__version__: str

class _ModelParams:
    path: str

class _CpuParams:
    n_threads: int

@disjoint_base
class CommonParams:
    model: _ModelParams
    model_alias: set[str]
    hostnames: list[str]
    port: int
    n_parallel: int
    kv_unified: bool
    n_ctx: int
    cache_ram_mib: int
    slot_save_path: str
    cache_idle_slots: bool
    ui: bool
    cpuparams: _CpuParams
    cpuparams_batch: _CpuParams
    def __init__(self) -> None: ...

@disjoint_base
class Server:
    listening_address: str
    # Cython's __cinit__ takes the parameters.
    def __new__(cls, params: CommonParams) -> Self: ...
