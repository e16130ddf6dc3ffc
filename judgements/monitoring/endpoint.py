"""GET /metrics for Prometheus. Off (404) unless MAGI_METRICS_TOKEN is set; then only a
request bearing that token is answered (401 otherwise): queue depth, models and costs
are not for the world to read."""

from django.http import HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from judgements.models.magi_settings import magi_settings
from judgements.monitoring.collector import DatabaseCollector


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = magi_settings.MAGI_METRICS_TOKEN
    if not token:
        return HttpResponse("Not found.\n", status=404, content_type="text/plain")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not constant_time_compare(given.strip(), token):
        response = HttpResponse("Send the metrics token.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="magi-metrics"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
