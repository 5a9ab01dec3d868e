from boards.models import Column, Run
from boards.services import run_complete, run_heartbeat, task_claim


def test_it_runs_the_loop(agent, task, ws_a):
    claim = task_claim(task_id=task.pk, connection=agent)
    assert claim.task.column == Column.DOING
    beat = run_heartbeat(workspace=ws_a, run_id=claim.run.run_id, lease_token=claim.lease_token, note="half way")
    assert beat.run.state == "active"
    done = run_complete(workspace=ws_a, run_id=claim.run.run_id, lease_token=claim.lease_token, outcome="fixed")
    assert done.task.column == Column.DONE
    assert Run.objects.get().state == "completed"
