"""Durable runs on Temporal (``[runs] engine = "temporal"``, ``tooldeck worker``).

A run is a workflow (``workflow.RunWorkflow``); each turn of its agent and each tool
call an activity (``activities.RunActivities``); a confirmation a workflow update.
``engine.TemporalRuns`` is the run API over it, ``runner.run_worker`` the worker.
Install with ``pip install temporalio``; nothing here is imported unless the engine is
chosen.
"""
