"""Why a delivery is refused; each error knows its HTTP status so the app maps them in one place."""

from __future__ import annotations

from mendflow.errors import InputError, MendflowError


class WebhookError(InputError):
    """A delivery mendflow refuses; the sender sees ``status_code`` and the one-line message."""

    status_code = 400


class MissingHeaderError(WebhookError):
    """A header the provider always sends (signature, token, event type) is absent."""

    status_code = 400


class BadSignatureError(WebhookError):
    """The signature or token does not match the configured secret."""

    status_code = 401


class ProviderDisabledError(WebhookError):
    """No secret is configured for this provider, so nothing it sends can be verified."""

    status_code = 404


class PayloadTooLargeError(WebhookError):
    """The body is larger than ``max_body_bytes``."""

    status_code = 413


class BodyTimeoutError(WebhookError):
    """The body did not arrive in time (a client trickling bytes holds a connection)."""

    status_code = 408


class MalformedPayloadError(WebhookError):
    """The body is signed correctly but is not the push payload we expect."""

    status_code = 400


class EmitError(MendflowError):
    """The Prefect API did not take the event; the delivery is not recorded, so a redelivery can retry."""

    status_code = 503
