"""A client for the PDF rendering service, on the standard library alone.

Renders (inline html or a saved template), waits for an async job or a batch with backoff,
retries what the service asks to be retried (429 and 503, after their Retry-After), and
verifies webhook deliveries (Standard Webhooks: HMAC-SHA256 of ``id.timestamp.body``).
Shapes are the service's OpenAPI document's (``/openapi.json``): jobs and batches are dicts.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Mapping, Optional

__all__ = [
    "PdfServiceClient",
    "PdfServiceError",
    "WebhookVerificationError",
    "verify_webhook",
    "retry_after_seconds",
]

_ENDED_JOB = ("completed", "failed")


class PdfServiceError(Exception):
    """An error answer of the service: its status and the contract's error body."""

    def __init__(self, status: int, body: Any, fallback: str) -> None:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        super().__init__(error.get("message") or fallback)
        self.status = status
        self.code: str = error.get("code") or f"HTTP_{status}"
        self.details: list = error.get("details") or []
        self.request_id: Optional[str] = error.get("request_id")
        self.job_id: Optional[str] = error.get("job_id")


class WebhookVerificationError(Exception):
    """A delivery whose signature does not match, or whose timestamp is stale."""


def retry_after_seconds(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Retry-After as seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        at = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


class PdfServiceClient:
    """``PdfServiceClient("http://127.0.0.1:3000", api_key)``; every method returns the API's JSON."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        timeout: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        urlopen: Callable[..., Any] = urllib.request.urlopen,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.timeout = timeout
        self._sleep = sleep
        self._urlopen = urlopen

    # The one place requests are made: 429 and 503 are retried after their Retry-After.
    def _request(self, method: str, path: str, body: Any = None, headers: Optional[dict] = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        sent = {"Authorization": f"Bearer {self.api_key}", **(headers or {})}
        if data is not None:
            sent["Content-Type"] = "application/json"
        attempt = 0
        while True:
            request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=sent)
            try:
                with self._urlopen(request, timeout=self.timeout) as response:
                    text = response.read().decode("utf-8")
                    return json.loads(text) if text else None
            except urllib.error.HTTPError as e:
                text = e.read().decode("utf-8", "replace")
                try:
                    parsed = json.loads(text) if text else None
                except ValueError:
                    parsed = None
                if e.code in (429, 503) and attempt < self.max_retries:
                    wait = retry_after_seconds(e.headers.get("Retry-After") if e.headers else None)
                    wait = 2.0**attempt if wait is None else wait
                    if wait <= self.max_retry_wait:
                        self._sleep(wait)
                        attempt += 1
                        continue
                raise PdfServiceError(e.code, parsed, f"{method} {path} answered {e.code}") from None

    def render(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None) -> dict:
        """``POST /v1/pdf``: the completed job (a failed render raises, with its job id)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._request("POST", "/v1/pdf", dict(body), headers)

    def render_async(self, body: Mapping[str, Any], idempotency_key: Optional[str] = None) -> dict:
        """``POST /v1/pdf`` with ``async``: the pending job at once; see ``wait_for_job``."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self._request("POST", "/v1/pdf", {**body, "async": True}, headers)

    def get_job(self, job_id: str) -> dict:
        return self._request("GET", "/v1/pdf/" + urllib.parse.quote(job_id, safe=""))

    def _poll(self, read, ended, what, timeout, initial_delay, max_delay) -> dict:
        deadline = time.monotonic() + timeout
        delay = initial_delay
        while True:
            value = read()
            if ended(value):
                return value
            if time.monotonic() + delay > deadline:
                raise TimeoutError(f"{what} had not ended in time ({value.get('status')})")
            self._sleep(delay)
            delay = min(delay * 1.5, max_delay)

    def wait_for_job(
        self, job_id: str, timeout: float = 600.0, initial_delay: float = 0.5, max_delay: float = 5.0
    ) -> dict:
        """Polls a job until it is completed or failed (a failed job is returned, not raised)."""
        return self._poll(
            lambda: self.get_job(job_id),
            lambda job: job["status"] in _ENDED_JOB,
            f"job {job_id}",
            timeout,
            initial_delay,
            max_delay,
        )

    def download(self, job: Mapping[str, Any]) -> bytes:
        """The job's PDF, from its download link (valid 15 minutes: read the job again for a fresh one)."""
        if not job.get("download_url"):
            raise ValueError(f"job {job.get('id')} has no file ({job.get('status')})")
        with self._urlopen(job["download_url"], timeout=self.timeout) as response:
            return response.read()

    def create_batch(self, body: Mapping[str, Any]) -> dict:
        """``POST /v1/batches``: the batch at once; see ``wait_for_batch``."""
        return self._request("POST", "/v1/batches", dict(body))

    def get_batch(self, batch_id: str) -> dict:
        return self._request("GET", "/v1/batches/" + urllib.parse.quote(batch_id, safe=""))

    def wait_for_batch(
        self, batch_id: str, timeout: float = 600.0, initial_delay: float = 0.5, max_delay: float = 5.0
    ) -> dict:
        """Polls a batch until every job ended (and its outputs, when asked for, are built or failed)."""
        return self._poll(
            lambda: self.get_batch(batch_id),
            lambda b: b["status"] == "completed" and (b.get("output_status") or "ready") != "pending",
            f"batch {batch_id}",
            timeout,
            initial_delay,
            max_delay,
        )

    def batch_jobs(self, batch_id: str, limit: int = 100, offset: int = 0) -> list:
        """A batch's jobs in item order."""
        query = urllib.parse.urlencode({"limit": limit, "offset": offset})
        return self._request("GET", f"/v1/batches/{urllib.parse.quote(batch_id, safe='')}/jobs?{query}")

    def usage(self) -> dict:
        return self._request("GET", "/v1/usage")


def verify_webhook(
    secret: str,
    raw_body: "bytes | str",
    headers: Mapping[str, str],
    tolerance_seconds: int = 300,
    now: Optional[float] = None,
) -> dict:
    """Verifies a delivery as Standard Webhooks signs it and returns its event.

    ``raw_body`` is the body as received; ``headers`` any mapping of the request's headers
    (names in any case). Raises WebhookVerificationError when no signature matches or the
    timestamp is more than ``tolerance_seconds`` away.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id, timestamp, signatures = (lower.get(h) for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-* headers")
    try:
        seconds = int(timestamp)
    except ValueError:
        raise WebhookVerificationError("the timestamp is not a number") from None
    if abs((time.time() if now is None else now) - seconds) > tolerance_seconds:
        raise WebhookVerificationError("the timestamp is too old or too new")
    body = raw_body.decode("utf-8") if isinstance(raw_body, bytes) else raw_body
    key = base64.b64decode(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    expected = hmac.new(key, f"{msg_id}.{timestamp}.{body}".encode("utf-8"), hashlib.sha256).digest()
    for entry in signatures.split(" "):
        version, _, signature = entry.partition(",")
        try:
            given = base64.b64decode(signature)
        except ValueError:
            continue
        if version == "v1" and hmac.compare_digest(given, expected):
            return json.loads(body)
    raise WebhookVerificationError("no signature matches")
