"""How records are shown in answers: the sandbox resources (``sandbox_views``), the accounts of
the account information side (``account_views``) and the opt-in changes a request asks for with
``x-accept-fix`` (``versioning``, spec 9).

Views read the model and return JSON documents; they know nothing of requests, handlers or the
pipeline.
"""
