"""events.instance_from_row: the instance the ORM would load, built without a setattr per column."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, models
from django.db.models import signals
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import AgentConnection, Plan, Usage, Workspace
from boards.models import Board, InboxItem, Report, Run, Task
from weft.events import attach, instance_from_row, partial_instance, row_loading
from weft.models import Event

pytestmark = pytest.mark.django_db

# Every model the claim, the completion, the gate and the relay load from rows.
LOADED = [Task, Run, Report, InboxItem, Event, Workspace, AgentConnection, Plan, Usage, Board]


def _as_orm_loads(instance: models.Model) -> models.Model:
    return type(instance)._default_manager.get(pk=instance.pk)


@pytest.mark.parametrize("model", LOADED, ids=lambda m: m.__name__)
def test_each_loaded_model_is_filled_directly(model: type[models.Model]) -> None:
    assert row_loading(model)[2], f"{model.__name__} would be loaded through from_db"


def test_the_instance_is_the_one_the_orm_loads(ws_a: Workspace, agent: AgentConnection) -> None:
    board = Board.objects.create(workspace=ws_a, name="B")
    task = Task.objects.create(workspace=ws_a, board=board, title="T", description="d")
    for saved in (ws_a, agent, board, task):
        orm = _as_orm_loads(saved)
        built = instance_from_row(type(saved), [getattr(orm, f.attname) for f in orm._meta.concrete_fields])
        assert type(built) is type(orm)
        assert {k: v for k, v in vars(built).items() if k != "_state"} == {
            k: v for k, v in vars(orm).items() if k != "_state"
        }
        assert (built._state.adding, built._state.db) == (False, orm._state.db)
        assert built == orm
        # Related objects load and cache as on an ORM instance.
        if isinstance(built, Task):
            assert built.board == board
            assert built._state.fields_cache["board"] is built.board


def test_a_partial_instance_is_the_one_the_orm_loads_with_those_columns(
    ws_a: Workspace, agent: AgentConnection
) -> None:
    values = {"id": agent.pk, "workspace_id": ws_a.pk}
    orm = AgentConnection.from_db("default", list(values), list(values.values()))
    built = partial_instance(AgentConnection, values)
    assert type(built) is AgentConnection
    assert not built._state.adding and built._state.db == "default"
    assert {k: v for k, v in vars(built).items() if k != "_state"} == {
        k: v for k, v in vars(orm).items() if k != "_state"
    }
    assert built.get_deferred_fields() == orm.get_deferred_fields()
    assert "name" in built.get_deferred_fields()
    assert built.name == agent.name  # a deferred column loads as on any deferred instance
    with pytest.raises(ValueError, match="no columns"):
        partial_instance(AgentConnection, {"id": agent.pk, "nickname": "x"})


def test_a_listener_on_init_sees_a_partial_instance_too(ws_a: Workspace, agent: AgentConnection) -> None:
    seen: list[Any] = []

    def listener(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append(instance)

    signals.post_init.connect(listener, sender=AgentConnection)
    try:
        built = partial_instance(AgentConnection, {"id": agent.pk, "workspace_id": ws_a.pk})
    finally:
        signals.post_init.disconnect(listener, sender=AgentConnection)
    assert seen == [built]


def test_a_listener_on_init_sees_every_instance(ws_a: Workspace) -> None:
    seen: list[Any] = []

    def listener(sender: Any, instance: Any, **kwargs: Any) -> None:
        seen.append(instance)

    signals.post_init.connect(listener, sender=Workspace)
    try:
        orm = _as_orm_loads(ws_a)
        seen.clear()
        built = instance_from_row(Workspace, [getattr(orm, f.attname) for f in orm._meta.concrete_fields])
    finally:
        signals.post_init.disconnect(listener, sender=Workspace)
    assert seen == [built]


def test_a_value_the_row_lacks_is_refused(ws_a: Workspace) -> None:
    orm = _as_orm_loads(ws_a)
    values = [getattr(orm, f.attname) for f in orm._meta.concrete_fields]
    with pytest.raises(ValueError, match="columns"):
        instance_from_row(Workspace, values[:-1])


class _Recording:
    """A data descriptor on a column's attribute, as some fields install: it must see every value."""

    def __init__(self) -> None:
        self.set: list[Any] = []

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else instance.__dict__["name"]

    def __set__(self, instance: Any, value: Any) -> None:
        self.set.append(value)
        instance.__dict__["name"] = value


def _built_with(monkeypatch: pytest.MonkeyPatch, workspace: Workspace, name: str, value: Any) -> Any:
    """The workspace's row loaded while Workspace.`name` is `value` (row_loading's cache cleared
    on both sides of it), and the row's values."""
    orm = Workspace.objects.get(pk=workspace.pk)
    values = [getattr(orm, f.attname) for f in orm._meta.concrete_fields]
    monkeypatch.setattr(Workspace, name, value)
    row_loading.cache_clear()
    try:
        return instance_from_row(Workspace, values), orm, values
    finally:
        monkeypatch.undo()
        row_loading.cache_clear()


def test_a_column_behind_a_descriptor_is_set_through_it(
    ws_a: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = _Recording()
    built, orm, _ = _built_with(monkeypatch, ws_a, "name", recording)
    assert recording.set == [orm.name]
    assert built.name == orm.name


def test_a_model_that_loads_itself_keeps_doing_so(ws_a: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model with its own from_db (say, one that remembers the values it was loaded with) gets it."""
    loaded: list[Any] = []
    plain = Workspace.from_db

    def from_db(cls: Any, db: Any, field_names: Any, values: Any) -> Any:
        loaded.append(list(values))
        return plain(db, field_names, values)

    built, orm, values = _built_with(monkeypatch, ws_a, "from_db", classmethod(from_db))
    assert loaded == [values]
    assert built == orm


def _state_of(instance: models.Model) -> tuple[dict[str, Any], dict[str, Any]]:
    return {k: v for k, v in vars(instance).items() if k != "_state"}, dict(instance._state.fields_cache)


def _links(ws_a: Workspace, ws_b: Workspace, agent: AgentConnection) -> list[tuple[models.Model, str, Any]]:
    """The links the claim, the completion, the gate and the relay attach (fast_rows, gate, events),
    each on a row that names another object than the one attached."""
    board = Board.objects.create(workspace=ws_a, name="B")
    first, second = (Task.objects.create(workspace=ws_a, board=board, title=t) for t in "TU")
    now = timezone.now()
    run = Run.objects.create(
        workspace=ws_a, task=first, epoch=1, started_at=now, last_heartbeat_at=now, lease_expires_at=now
    )
    event = Event.objects.create(workspace=ws_b, type="t", entity_type="e", entity_id="1")
    plan = Plan.objects.create(code="attached", name="Attached")
    return [
        (run, "task", second),
        (ws_a, "plan", plan),
        (agent, "workspace", ws_b),
        (event, "workspace", ws_a),
    ]


def test_an_attached_object_is_what_the_descriptor_sets(
    ws_a: Workspace, ws_b: Workspace, agent: AgentConnection
) -> None:
    """attach(instance, name, related) leaves the instance as `instance.<name> = related` does:
    the key's column and the cached object, read back without a query."""
    for saved, name, related in _links(ws_a, ws_b, agent):
        model = type(saved)
        by_descriptor, by_attach = (model._default_manager.get(pk=saved.pk) for _ in "ab")
        assert getattr(by_attach, f"{name}_id") != related.pk, name  # the link moves
        setattr(by_descriptor, name, related)
        attach(by_attach, name, related)
        assert _state_of(by_attach) == _state_of(by_descriptor), f"{model.__name__}.{name}"
        with CaptureQueriesContext(connection) as queries:
            assert getattr(by_attach, name) is related
        assert len(queries) == 0


def test_only_a_forward_foreign_key_is_attached(ws_a: Workspace) -> None:
    with pytest.raises(ValueError, match="not a forward foreign key"):
        attach(ws_a, "name", ws_a)
