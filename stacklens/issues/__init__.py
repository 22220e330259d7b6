"""Issue workflow: statuses, transitions and their history (warehouse tables ``issue_state`` /
``issue_history``)."""
