/* env_gym.c: the spec of a Gymnasium environment (an env named "gym:ID"),
 * for seed_env_probe (seed/env.h).
 *
 * No seed_envs can make a Gymnasium environment: it lives in seed-gym(1),
 * the Python bridge actor.  Its spec is asked of seed-gym, run as
 * `seed-gym --env ID --env-options JSON --spec` (the program named by
 * $SEED_GYM, else seed-gym on PATH; seed-train sets SEED_GYM to the one
 * beside it), which prints one JSON object {"obs_dtype", "obs_shape",
 * "num_actions", "max_steps"} and exits 0, or says what is wrong on its
 * standard error (which is the caller's) and exits 2 when the environment
 * cannot work with Seed, 1 on other failures.
 */
#include "seed/env.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run prog's --spec for env and options; its standard output into buf (n
 * bytes, terminated).  Returns its exit status (127: it could not be run,
 * 128 + N: killed by signal N), or -errno. */
static int run_spec(const char *prog, const char *env, const char *options, char *buf, size_t n)
{
	int fd[2];
	if (pipe(fd))
		return -errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fd[0]);
		close(fd[1]);
		return -e;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp(prog, prog, "--env", env, "--env-options", options, "--spec", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	size_t len = 0;
	ssize_t r;
	while ((r = read(fd[0], buf + len, n - 1 - len)) > 0 || (r < 0 && errno == EINTR))
		len += r > 0 ? (size_t)r : 0;
	close(fd[0]);
	buf[len] = '\0';
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The spec printed by --spec, or false when it is not one. */
static bool parse_spec(const char *text, seed_env_spec *out)
{
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	const char *dt = json_string_value(json_object_get(o, "obs_dtype"));
	json_t *shape = json_object_get(o, "obs_shape");
	json_t *na = json_object_get(o, "num_actions"), *ms = json_object_get(o, "max_steps");
	seed_env_spec s = {0};
	s.obs_dtype = dt ? seed_dtype_parse(dt, strlen(dt)) : SEED_DTYPE_INVALID;
	s.obs_rank = json_is_array(shape) ? (int)json_array_size(shape) : 0;
	bool ok = o && s.obs_dtype != SEED_DTYPE_INVALID && s.obs_rank >= 1 &&
	          s.obs_rank <= SEED_ENV_MAX_OBS_RANK && json_is_integer(na) && json_integer_value(na) >= 1 &&
	          json_integer_value(na) <= INT32_MAX && json_is_integer(ms) && json_integer_value(ms) >= 0 &&
	          json_integer_value(ms) <= INT32_MAX;
	for (int i = 0; ok && i < s.obs_rank; i++) {
		json_t *d = json_array_get(shape, (size_t)i);
		ok = json_is_integer(d) && json_integer_value(d) >= 1 && json_integer_value(d) <= INT32_MAX;
		if (ok)
			s.obs_shape[i] = json_integer_value(d);
	}
	if (ok) {
		s.num_actions = (int)json_integer_value(na);
		s.max_steps = (int)json_integer_value(ms);
		*out = s;
	}
	json_decref(o);
	return ok;
}

int seed_env_gym_spec(const char *name, const char *options, seed_env_spec *spec, seed_err *err)
{
	const char *prog = getenv("SEED_GYM");
	if (!prog || !*prog)
		prog = "seed-gym";
	char buf[4096];
	int st = run_spec(prog, name, options && *options ? options : "{}", buf, sizeof buf);
	if (st < 0)
		return seed_err_set(err, st, "env \"%s\": %s --spec: %s", name, prog, strerror(-st));
	if (st == 127)
		return seed_err_set(err, -ENOENT,
		                    "env \"%s\": cannot run %s (set SEED_GYM, or put seed-gym on PATH)", name,
		                    prog);
	/* Its status 2: the environment cannot work (seed-gym(1)); else a runtime failure. */
	if (st != 0)
		return seed_err_set(err, st == 2 ? -SEED_EOPTION : -EIO,
		                    "env \"%s\": `%s --spec` failed (status %d; its message is above)", name,
		                    prog, st);
	if (!parse_spec(buf, spec))
		return seed_err_set(err, -SEED_EOPTION,
		                    "env \"%s\": `%s --spec` printed no valid spec (obs_dtype, obs_shape of "
		                    "rank 1..%d, num_actions, max_steps): %.200s",
		                    name, prog, SEED_ENV_MAX_OBS_RANK, buf);
	return 0;
}
