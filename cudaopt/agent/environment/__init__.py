"""Where the model acts: the `Workspace` and its six tools (`workspace`), confined to one
folder; the `shell` its bash tool runs in (through `cudaopt.sandbox`); the workspace's
`layout` on disk (task, starter, skills, the `cudaopt` command); and the `actions` a model's
reply asks for. Not to be confused with `cudaopt.env`, the reward service that drives whole
runs from outside."""
