/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmpressure_fd(2) test utility
 *
 * Copyright 2011-2012 Pekka Enberg <penberg@kernel.org>
 * Copyright 2011-2012 Linaro Ltd.
 *		       Anton Vorontsov <anton.vorontsov@linaro.org>
 *
 * The seed's tools/testing/vmpressure/vmpressure-test.c, built against
 * libvmpressure instead of the raw syscall, so that it runs on any kernel
 * (through vmpressured). The output is the seed's, line for line; stdout
 * is line-buffered so that a pipe sees every event as it comes.
 */

#include <vmpressure.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <poll.h>

#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))

static void pexit(const char *str)
{
	perror(str);
	exit(1);
}

int main(int argc, char *argv[])
{
	struct vmpressure_config config[] = {
		/*
		 * We could just set the lowest priority, but we want to
		 * actually test if the thresholds work.
		 */
		{ .threshold = VMPRESSURE_LOW },
		{ .threshold = VMPRESSURE_MEDIUM },
		{ .threshold = VMPRESSURE_OOM },
	};
	const size_t num = ARRAY_SIZE(config);
	struct pollfd pfds[ARRAY_SIZE(config)];
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);

	for (i = 0; i < num; i++) {
		pfds[i].fd = vmpressure_fd(&config[i]);
		if (pfds[i].fd < 0)
			pexit("vmpressure_fd failed");

		pfds[i].events = POLLIN;
	}

	while (poll(pfds, num, -1) > 0) {
		for (i = 0; i < num; i++) {
			struct vmpressure_event event;
			ssize_t n;

			if (!pfds[i].revents)
				continue;

			n = read(pfds[i].fd, &event, sizeof(event));
			if (n < 0)
				pexit("read failed");
			if (n == 0) {
				/* vmpressured went away: its descriptors hang up. */
				fprintf(stderr, "vmpressure_fd: end of events\n");
				return 1;
			}

			printf("VM pressure: 0x%.8x (threshold 0x%.8x)\n",
			       event.pressure, config[i].threshold);
		}
	}

	perror("poll failed\n");

	for (i = 0; i < num; i++) {
		if (close(pfds[i].fd) < 0)
			pexit("close failed");
	}

	exit(1);
	return 0;
}
