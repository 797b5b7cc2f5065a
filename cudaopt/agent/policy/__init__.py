"""The model side of the agent: anything that answers a conversation with one assistant
message (`model.Model`), its policies (`llm` for any litellm provider, `replay` for a
recorded trajectory), and what every policy shares: the context budget (`context`),
`compaction` when a conversation outgrows it, prompt-cache markers (`caching`), the billed
`usage`, and `asking`, one model call per step. Knows nothing of the workspace's files
beyond the actions a reply asked for."""
