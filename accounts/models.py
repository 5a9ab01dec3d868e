"""People, tenants and what they pay for: User, Workspace, Seat, Plan, Usage, Invitation, AgentConnection,
PersonalAccessToken."""

from __future__ import annotations

import secrets
from datetime import date, timedelta
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.utils import timezone
from django.utils.text import slugify

from accounts import roles


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create(self, email: str, password: str | None, **extra: object) -> User:
        if not email:
            raise ValueError("An email address is required")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: object) -> User:
        extra["is_staff"] = True
        extra["is_superuser"] = True
        return self._create(email, password, **extra)


class User(AbstractUser):
    """A person; the email address is the login."""

    username = None  # type: ignore[assignment]
    email = models.EmailField("email address", unique=True)
    name = models.CharField(max_length=150, blank=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    objects = UserManager()  # type: ignore[misc,assignment]

    def __str__(self) -> str:
        return self.email

    @property
    def display_name(self) -> str:
        return self.name or self.email.split("@")[0]


# The two plans of the price list; the data migration and Plan.named() create them from here.
STANDARD_PLANS: dict[str, dict[str, object]] = {
    "free": {
        "name": "Free",
        "monthly_task_cap": 50,
        "monthly_agent_call_cap": 200,
        "seat_price_month_cents": 0,
        "seat_price_year_cents": 0,
    },
    "pro": {
        "name": "Pro",
        "monthly_task_cap": None,
        "monthly_agent_call_cap": None,
        "seat_price_month_cents": 700,
        "seat_price_year_cents": 6000,
    },
}


class Plan(models.Model):
    """A price list entry; operators assign it to workspaces in the admin."""

    FREE = "free"
    PRO = "pro"

    code = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=64)
    # None means no cap.
    monthly_task_cap = models.PositiveIntegerField(null=True, blank=True)
    monthly_agent_call_cap = models.PositiveIntegerField(null=True, blank=True)
    seat_price_month_cents = models.PositiveIntegerField(default=0)
    seat_price_year_cents = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def named(cls, code: str) -> Plan:
        """A standard plan by code, recreated from STANDARD_PLANS if an operator deleted it."""
        plan, _ = cls.objects.get_or_create(code=code, defaults=STANDARD_PLANS[code])
        return plan

    def cap_for(self, kind: str) -> int | None:
        return {
            Usage.TASKS: self.monthly_task_cap,
            Usage.AGENT_CALLS: self.monthly_agent_call_cap,
        }[kind]


class Workspace(models.Model):
    """The tenant. Every tenant row carries `workspace_id` directly."""

    BILLING_MONTHLY = "monthly"
    BILLING_YEARLY = "yearly"

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=60, unique=True)
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="workspaces")
    billing_period = models.CharField(
        max_length=8,
        choices=[(BILLING_MONTHLY, "Monthly"), (BILLING_YEARLY, "Yearly")],
        default=BILLING_MONTHLY,
    )
    # The operators' kill switch: every agent call refuses with workspace_suspended.
    is_suspended = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def unique_slug(name: str) -> str:
        base = slugify(name)[:40] or "workspace"
        slug = base
        while Workspace.objects.filter(slug=slug).exists():
            slug = f"{base}-{secrets.token_hex(3)}"
        return slug

    @property
    def people_count(self) -> int:
        return self.seats.count()


class Seat(models.Model):
    """A user's membership of a workspace: what a paid plan is billed on."""

    OWNER = roles.OWNER
    ADMIN = roles.ADMIN
    MEMBER = roles.MEMBER
    ROLES = roles.ROLES

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="seats")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="seats")
    role = models.CharField(max_length=8, choices=ROLES, default=MEMBER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="one_seat_per_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    @property
    def can_manage(self) -> bool:
        return roles.can_manage(self.role)


def month_start(day: date) -> date:
    return day.replace(day=1)


def next_month_start(day: date) -> date:
    return (day.replace(day=1) + timedelta(days=32)).replace(day=1)


class Usage(models.Model):
    """A monthly counter per workspace and kind, incremented atomically in the database."""

    TASKS = "tasks"
    AGENT_CALLS = "agent_calls"
    KINDS = [(TASKS, "Tasks created"), (AGENT_CALLS, "Agent calls")]

    # No index of its own: the unique (workspace, period, kind) leads with it.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="usage", db_index=False)
    period = models.DateField(help_text="First day of the calendar month (UTC)")
    kind = models.CharField(max_length=16, choices=KINDS)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "period", "kind"], name="one_usage_row_per_month")
        ]

    def __str__(self) -> str:
        return f"{self.workspace} {self.period:%Y-%m} {self.kind}={self.count}"


def _invitation_token() -> str:
    return secrets.token_urlsafe(24)


class Invitation(models.Model):
    """An owner's or admin's invitation by email; accepting creates the seat."""

    TTL = timedelta(days=7)

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=8, choices=Seat.ROLES, default=Seat.MEMBER)
    token = models.CharField(max_length=64, unique=True, default=_invitation_token, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.email} → {self.workspace}"

    @property
    def is_pending(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None and self.expires_at > timezone.now()


class AgentConnection(models.Model):
    """One OAuth client signed in by one user for one workspace; an agent's every act is attributed to it."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="connections")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="connections")
    application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="weft_connections",
    )
    name = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The MCP client as it named itself in `initialize` (clientInfo), or at registration
    # (software_id / software_version); None until one of them said so.
    client_name = models.CharField(max_length=100, null=True, blank=True)
    client_version = models.CharField(max_length=100, null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "user"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.user} in {self.workspace})"


class PersonalAccessToken(models.Model):
    """A person's token for the REST API and the CLI, acting through its own agent connection.

    Only the SHA-256 of the secret is kept; the secret is shown once, when it is created. The
    connection carries the workspace, the user and the revocation the gate checks.
    """

    PREFIX = "wpat_"

    connection = models.OneToOneField(
        AgentConnection, on_delete=models.CASCADE, related_name="personal_token"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="personal_tokens")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="personal_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # May decide the person's Inbox over REST (accept, rework, later, drop, answer) as them;
    # off by default, so a token handed to an agent cannot accept that agent's own work.
    can_decide = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["workspace", "user"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.user} in {self.workspace})"


class PlanChange(models.Model):
    """An owner's change of plan or billing period, with what it cost, for the operators to invoice.

    `recorded`: applied at once, to be invoiced by the operators (the default payment adapter);
    `pending`: waiting for the person to pay at the provider's checkout; `paid`: paid there and
    applied; `abandoned`: the checkout was not paid (the plan did not change).
    """

    RECORDED, PENDING, PAID, ABANDONED = "recorded", "pending", "paid", "abandoned"
    STATES = [
        (RECORDED, "Recorded"),
        (PENDING, "Waiting for payment"),
        (PAID, "Paid"),
        (ABANDONED, "Abandoned"),
    ]

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="plan_changes")
    by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    from_plan = models.CharField(max_length=32)
    from_period = models.CharField(max_length=8)
    to_plan = models.CharField(max_length=32)
    to_period = models.CharField(max_length=8)
    seats = models.PositiveIntegerField()
    credit_cents = models.PositiveIntegerField(default=0)
    charge_cents = models.PositiveIntegerField(default=0)
    provider = models.CharField(max_length=16)
    reference = models.CharField(max_length=255, blank=True)
    state = models.CharField(max_length=16, choices=STATES)
    created_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.workspace}: {self.from_plan}/{self.from_period} → {self.to_plan}/{self.to_period}"

    @property
    def net_cents(self) -> int:
        return self.charge_cents - self.credit_cents
