# SciPy ships no types (scipy-stubs is a separate project): the beta distribution's
# quantile, the one thing judgements/core/kept_verdicts.py asks of scipy.stats (a
# certificate's bound), and the binomial test the tests check it and plain_call against
# (scipy/stats/_distn_infrastructure.py, _binomtest.py).

class _Beta:
    def ppf(self, q: float, a: float, b: float) -> float: ...

beta: _Beta

class _ConfidenceInterval:
    low: float
    high: float

class _BinomTestResult:
    def proportion_ci(
        self, confidence_level: float = 0.95, method: str = "exact"
    ) -> _ConfidenceInterval: ...

def binomtest(
    k: int, n: int, p: float = 0.5, alternative: str = "two-sided"
) -> _BinomTestResult: ...
