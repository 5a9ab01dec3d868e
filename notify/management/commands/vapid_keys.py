"""`manage.py vapid_keys`: a new VAPID key pair, printed as the two settings push needs."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from notify.keys import generate


class Command(BaseCommand):
    help = "Print a new VAPID key pair as WEFT_VAPID_PRIVATE_KEY and WEFT_VAPID_PUBLIC_KEY."

    def handle(self, *args: Any, **options: Any) -> None:
        private, public = generate()
        self.stdout.write(f"WEFT_VAPID_PRIVATE_KEY={private}\nWEFT_VAPID_PUBLIC_KEY={public}\n")
