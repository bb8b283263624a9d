"""The code environment: a bubblewrap sandbox (`environments.code.sandbox.run_python`),
an execution pool with `POST /v1/run_code`, and function-synthesis tasks."""
