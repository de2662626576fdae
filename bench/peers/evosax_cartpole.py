"""Time evosax's OpenAI-ES (Open_ES) on gymnax's CartPole-v1, JAX on the CPU.

usage: python3 evosax_cartpole.py SEED [MAX_SECONDS [POPULATION [LR [SIGMA]]]]

The policy is evosax's own MLP (evosax.problems.networks.MLP), 64 tanh units and
two logits, acting greedily (argmax); evosax's GymnaxProblem plays one episode
per member (its observation normalisation on, the default).  OpenAI-ES with
antithetic sampling, centred-rank fitness shaping (evosax's default), Adam on
the gradient estimate, a constant sigma.  evosax minimises, so the fitness it
is told is minus the return.

Every 5 generations the centre (the distribution's mean) is evaluated greedily
on 100 episodes (the same measure seed-eval reports for Seed); the run stops
when that mean reaches 475 or after MAX_SECONDS (default 300).  The wall time
counts everything from the process start (imports and JIT compilation
included), as Seed's figures count a cold start.  Prints one JSON line.
"""
import json
import sys
import time

T0 = time.time()
if len(sys.argv) < 2:
    sys.exit(__doc__)
seed = int(sys.argv[1])
max_s = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0
popsize = int(sys.argv[3]) if len(sys.argv) > 3 else 64
lr = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
sigma = float(sys.argv[5]) if len(sys.argv) > 5 else 0.1

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from evosax.algorithms import Open_ES  # noqa: E402
from evosax.problems import GymnaxProblem  # noqa: E402
from evosax.problems.networks import MLP  # noqa: E402


def greedy(x, key=None):
    return jnp.argmax(x, axis=-1)


policy = MLP(layer_sizes=(64, 2), output_fn=greedy)
problem = GymnaxProblem("CartPole-v1", policy=policy, num_rollouts=1)
key = jax.random.key(seed)
key, k_init, k_prob = jax.random.split(key, 3)
pstate = problem.init(k_prob)
solution = problem.sample(k_init)
es = Open_ES(
    population_size=popsize,
    solution=solution,
    optimizer=optax.adam(lr),
    std_schedule=optax.constant_schedule(sigma),
)
params = es.default_params
state = es.init(k_init, solution, params)

# 100 greedy episodes of one parameter set (the centre), with the problem's
# current observation statistics.
eval100 = jax.jit(lambda k, sol, st: problem._rollouts(jax.random.split(k, 100), sol, st)[0])


@jax.jit
def generation(key, state, pstate):
    k_ask, k_eval, k_tell = jax.random.split(key, 3)
    population, state = es.ask(k_ask, state, params)
    fitness, pstate, _ = problem.eval(k_eval, population, pstate)
    state, _ = es.tell(k_tell, population, -fitness, state, params)
    return state, pstate, fitness


gen = 0
steps = 0
best_eval = -1.0
solved = False
while time.time() - T0 < max_s:
    key, k = jax.random.split(key)
    state, pstate, fitness = generation(k, state, pstate)
    gen += 1
    # every member plays one episode; a return of CartPole is its length
    steps += int(jnp.sum(fitness))
    if gen % 5 == 0:
        key, k = jax.random.split(key)
        ret = eval100(k, es.get_mean(state), pstate)
        best_eval = float(jnp.mean(ret))
        if best_eval >= 475:
            solved = True
            break

print(
    json.dumps(
        {
            "peer": "evosax Open_ES",
            "seed": seed,
            "solved": solved,
            "wall_s": round(time.time() - T0, 2),
            "generations": gen,
            "population": popsize,
            "env_steps": steps,
            "eval": round(best_eval, 2),
        }
    )
)
