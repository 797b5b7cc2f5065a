"""The agent behind `cudaopt optimize`, in three rooms (after mini-swe-agent):

- the loop, here: `loop` (ask, act, watch the judged candidates, decide when to stop), `run`
  (a run folder from start or resume to the final verdict), `judging` (the run's warm judge)
  and `best` (the best candidate, as cudaopt itself judged it);
- `policy/`, the model side: the `Model` protocol and its policies (litellm, replay), the
  context budget, compaction, prompt caching and what each call was billed;
- `environment/`, where the model acts: the `Workspace` and its six tools, the shell, the
  workspace's layout and the actions parsed from a reply.

Below all three: `config` (RunConfig, Limits, RunState), `errors`, `events`, `prompts`,
`trajectory` and `records` (the seam the judge's CLI writes candidates through). The round
trip from a model's reply to a judgement is drawn in docs/agent.md."""
