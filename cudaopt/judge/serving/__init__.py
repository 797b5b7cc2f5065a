"""Judgements served from a warm pool over a Unix socket: the server an agent run or
`cudaopt serve` starts, and the client `cudaopt check` / `verify` use to reach it."""
