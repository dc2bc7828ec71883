/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer io_uring front end: job submission by IORING_OP_URING_CMD.
 */
#ifndef WAFER_URING_H
#define WAFER_URING_H

struct io_uring_cmd;

int wafer_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

#endif /* WAFER_URING_H */
