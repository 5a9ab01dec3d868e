import threading

import pytest
from django.db import connection

from accounts.models import Usage
from accounts.services import usage_consume
from weft.errors import WeftError


def test_it_refuses_the_51st_task(ws_a):
    for _ in range(50):
        usage_consume(workspace=ws_a, kind=Usage.TASKS)
    with pytest.raises(WeftError) as exc:
        usage_consume(workspace=ws_a, kind=Usage.TASKS)
    assert exc.value.code == "plan_limit_reached"
    assert exc.value.details["used"] == 50
    assert exc.value.details["limit"] == 50
    assert exc.value.fix.marker == "Wait"


@pytest.mark.django_db(transaction=True)
def test_it_loses_no_count_under_50_threads(on_postgres, ws_a):
    ws_a.plan.monthly_agent_call_cap = None
    ws_a.plan.save()
    barrier = threading.Barrier(50)
    errors: list[BaseException] = []

    def consume() -> None:
        try:
            barrier.wait()
            for _ in range(4):
                usage_consume(workspace=ws_a, kind=Usage.AGENT_CALLS)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=consume) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert Usage.objects.get(workspace=ws_a, kind=Usage.AGENT_CALLS).count == 200


@pytest.mark.django_db(transaction=True)
def test_it_admits_exactly_the_cap_under_60_threads(on_postgres, ws_a):
    barrier = threading.Barrier(60)
    outcomes: list[str] = []
    lock = threading.Lock()

    def consume() -> None:
        try:
            barrier.wait()
            usage_consume(workspace=ws_a, kind=Usage.TASKS)
            outcome = "ok"
        except WeftError as exc:
            outcome = exc.code
        except BaseException as exc:  # pragma: no cover - reported below
            outcome = repr(exc)
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=consume) for _ in range(60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] * 50 + ["plan_limit_reached"] * 10
    assert Usage.objects.get(workspace=ws_a, kind=Usage.TASKS).count == 50
