/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer io_uring front end: job submission by IORING_OP_URING_CMD.
 */
#ifndef WDRV_URING_H
#define WDRV_URING_H

struct io_uring_cmd;

int wdrv_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

#endif /* WDRV_URING_H */
