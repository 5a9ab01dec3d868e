"""One live run per task, under real threads on PostgreSQL."""

import random
from collections import Counter

import pytest

from accounts.models import AgentConnection
from boards.models import Column, Run, Task
from boards.services import task_claim, task_create
from tests.boards.helpers import race
from weft.errors import WeftError

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 20


@pytest.fixture
def agents(pro, alice):
    made = [AgentConnection.objects.create(workspace=pro, user=alice, name=f"agent {n}") for n in range(32)]
    return list(AgentConnection.objects.select_related("workspace").filter(pk__in=[a.pk for a in made]))


def test_32_threads_on_one_task_give_one_run(on_postgres, pro, alice, agents):
    for round_no in range(ROUNDS):
        task = task_create(workspace=pro, title=f"Contended {round_no}", by_user=alice).task

        def claim(agent: AgentConnection, t: Task = task) -> object:
            return task_claim(task_id=t.pk, connection=agent)

        outcomes = race(agents, claim)
        codes = Counter(o.code if isinstance(o, WeftError) else type(o).__name__ for o in outcomes)
        assert codes == {"ClaimResult": 1, "already_claimed": 31}, codes
        assert Run.objects.filter(task=task).count() == 1
        task.refresh_from_db()
        assert task.column == Column.DOING and task.epoch == 1
        # Keep the attention meter and later rounds independent of this one.
        Task.objects.filter(pk=task.pk).update(column=Column.DONE)


def test_16_threads_over_200_tasks_claim_each_at_most_once_per_epoch(on_postgres, pro, alice, agents):
    tasks = [task_create(workspace=pro, title=f"Task {n}", by_user=alice).task for n in range(200)]
    ids = [t.pk for t in tasks]
    for round_no in range(ROUNDS):
        Task.objects.filter(pk__in=ids).update(column=Column.TODO, assignee_connection=None)
        Run.objects.filter(task_id__in=ids, state__in=["active", "waiting_input"]).update(state="released")
        epochs = dict(Task.objects.filter(pk__in=ids).values_list("pk", "epoch"))

        def claim_many(agent, seed=round_no):
            order = ids[:]
            random.Random(seed * 100 + agent.pk).shuffle(order)
            won = []
            for task_id in order[:12]:
                try:
                    won.append(task_claim(task_id=task_id, connection=agent).task.pk)
                except WeftError as exc:
                    assert exc.code == "already_claimed", exc
            return won

        outcomes = race(agents[:16], claim_many)
        assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
        won = Counter(task_id for o in outcomes for task_id in o)  # type: ignore[union-attr]
        assert max(won.values()) == 1
        runs = Counter(Run.objects.filter(task_id__in=ids).values_list("task_id", "epoch"))
        assert all(n == 1 for n in runs.values())
        for task_id in won:
            assert Task.objects.get(pk=task_id).epoch == epochs[task_id] + 1
