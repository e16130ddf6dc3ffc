from django.apps import AppConfig


class JudgementsConfig(AppConfig):
    name = "judgements"
    verbose_name = "Judgements"
