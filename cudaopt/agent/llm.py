"""The old path of `cudaopt.agent.policy.llm`, kept while `cudaopt.synth` still imports
`LitellmModel` from here (its owners move it over; then this file goes)."""

from cudaopt.agent.policy.llm import LitellmModel as LitellmModel
