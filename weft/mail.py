"""The embedded default's email backend: prints each message readably, links intact."""

from __future__ import annotations

from django.core.mail import EmailMessage
from django.core.mail.backends.console import EmailBackend


class ConsoleEmailBackend(EmailBackend):
    """Like Django's console backend, but the body is printed as text rather than quoted-printable,
    whose soft line breaks cut long links (the verification and invitation links) in two."""

    def write_message(self, message: EmailMessage) -> None:  # type: ignore[override]
        lines = [
            f"From: {message.from_email}",
            f"To: {', '.join(message.to)}",
            f"Subject: {message.subject!s}",
            "",
            str(message.body),
            "-" * 79,
            "",
        ]
        self.stream.write("\n".join(lines))
