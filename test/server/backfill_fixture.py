"""What the backfill end-to-end tests share (issue 29): daily workflows of command jobs that append
"<workflow> <slot time>" to a runs file when they start, and reading that file back."""

import os

WORKFLOW = """celos.defineWorkflow({id: "%(id)s", startTime: "2015-08-01T00:00Z",
    schedule: celos.cronSchedule("0 0 0 * * ?"),
    schedulingStrategy: celos.serialSchedulingStrategy(%(concurrency)d),
    trigger: celos.alwaysTrigger(),
    externalService: celos.commandExternalService(
        'echo "$CELOS_WORKFLOW_ID $CELOS_SLOT_TIME" >> %(runs)s%(after)s')});
"""


def daily_workflow(workflow_id, runs, concurrency=1, after=""):
    """A daily workflow from 2015-08-01; `after` is shell run after the line is written."""
    return WORKFLOW % {"id": workflow_id, "runs": runs, "concurrency": concurrency,
                       "after": after}


def run_lines(runs):
    """[(workflow, slot time)] in the order the jobs started."""
    if not os.path.exists(runs):
        return []
    with open(runs) as f:
        return [tuple(line.split()) for line in f if line.strip()]
