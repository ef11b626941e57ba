/*
 * replay_main.c — run a libFuzzer target over files without libFuzzer.
 *
 * CI builds each fuzz/fuzz_*.c with gcc (under ASan+UBSan in `make SAN=1`)
 * and replays fuzz/corpus/<name>/ through it, so every crash the fuzzers
 * ever found stays fixed.  Real fuzzing: `make fuzz` (clang, libFuzzer).
 *
 *   build/fuzz/fuzz_stat FILE_OR_DIR...
 * Prints "# fuzz: N passed, 0 failed" (a crash aborts the program instead).
 * An input that runs longer than INPUT_SECONDS is a hang, as libFuzzer's
 * -timeout says: it is named and the replay exits 70 rather than stall CI.
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INPUT_SECONDS 20        /* an input takes milliseconds, even under ASan on a busy host */
#define TEXT(x) #x
#define NUMBER_TEXT(x) TEXT(x)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current_input = "(empty input)";

static void on_alarm(int sig)
{
	static const char what[] = "fuzz replay: a hang: over " NUMBER_TEXT(INPUT_SECONDS) " s on ";

	(void)sig;
	(void)!write(STDERR_FILENO, what, sizeof(what) - 1);
	(void)!write(STDERR_FILENO, current_input, strlen(current_input));
	(void)!write(STDERR_FILENO, "\n", 1);
	_exit(70);
}

static void run_input(const char *name, const uint8_t *data, size_t size)
{
	current_input = name;
	alarm(INPUT_SECONDS);
	LLVMFuzzerTestOneInput(data, size);
	alarm(0);
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	run_input(path, buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0, bad = 0, i;

	signal(SIGALRM, on_alarm);

	for (i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "cannot stat '%s'\n", argv[i]);
			bad++;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *de;
			char path[4096];
			while (d && (de = readdir(d)) != NULL) {
				if (de->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
				if (run_file(path) == 0)
					count++;
			}
			if (d)
				closedir(d);
		} else if (run_file(argv[i]) == 0) {
			count++;
		}
	}
	/* An empty input must not crash either. */
	run_input("(empty input)", (const uint8_t *)"", 0);
	count++;
	printf("# fuzz: %d passed, %d failed\n", count, bad);
	return bad ? 1 : 0;
}
