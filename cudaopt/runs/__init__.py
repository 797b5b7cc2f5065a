"""Where runs live and how they are found again: a run's folder and meta.json (`folder`),
the index that finds runs from anywhere in the repository (`index`), and the git branch an
accepted kernel is committed to (`gitops`). Imports nothing of the agent, so the judge may
keep its state beside a run's."""
