# route: ray
import ray

from agentgym_budget.integrations.ray_rollouts import Continuation, ForkPoint, RolloutConfig, play_forks

ray.init()
config = RolloutConfig("TextWorld-CoinCollector-v0", env_kwargs="level=10", max_turns=14, info_keys=("expert_action",))
env = config.make()  # the driver's stack: the same as every actor's
observation, info = env.reset(seed=4, options={"task": config.ref.task_ids()[1]})
observation, _, _, _, info = env.step(info["expert_action"])
point = ForkPoint.take(env, observation, info)  # one snapshot, put in the object store once
continuations = [Continuation(agent="expert"), Continuation(agent="random", seed=1), Continuation(actions=("look",))]
for rollout in play_forks(config, point, continuations, actors=2):
    print(rollout.won, rollout.start_turn, rollout.turn, rollout.actions[:3])
# True 1 10 ['go east', 'go north', 'go north']
# False 1 14 ['go north', 'look', 'go south']
# False 1 2 ['look']
