#!/bin/sh
# stream_seeds.sh DIR -- writes the seed inputs of fuzz/corpus-stream.
# The format is in fuzz/stream_fuzz.c: byte 0 setup (bit 0 UNTIL_FULL,
# bits 1-2 stream size 256/4K/16K/128K, bits 3-4 max-data-size 0/24/200/1200,
# bit 5 second thread, bit 6 stop first, bit 7 nested levels), byte 1
# setup events, then ops:
#   0 R OFF3 LEN BYTES  patch bytes     1 R OFF3 W8  set a word
#   2 R OFF3 D          add D to a word
#   3 A  read up to (A&15)+1 events into buffer (A>>4)&3 (0, 5, 64, 65536
#        bytes), modes (i+(A>>6))%3: try, timed past, timed 1 step ahead
#   4 read dry   5 A record A&63 events at level A>>6   6 N thread records N
#   7 stop   8 start   9 clear   10 MS clock +MS ms   11 status and names
# Regions R%8: 0 header, 1 header counter number R/8 (0 state, 4 loss_gen,
# 5 free_top, 6 acq_seq, 7 sealed_bytes, 8 seal_seq, 9 reclaim), 2 chunk
# descriptors, 3 acquisition log, 4 seal log, 5 chunk data, 6 names,
# 7 loss ring.  Offsets are 3 bytes, little-endian.
set -e
dir=${1:?usage: stream_seeds.sh DIR}
mkdir -p "$dir"

seed() {
	name=$1
	shift
	s=
	for b; do
		s="$s\\$(printf %03o "$b")"
	done
	printf "$s" >"$dir/$name"
}

# undamaged LOOP stream that wraps: a thread, nested levels, reads in between
seed clean_loop 0xb0 200  3 0x85  5 0x3f  4  11
# UNTIL_FULL: fills, stops itself, is read dry (restarts), fills again
seed until_full 0x09 255  4  5 0x7f  4  7  8  5 0x3f  4
# stopped, cleared, started again; big payloads in 8 KiB chunks
seed stopped_clear 0x5a 64  3 0x10  9  8  5 0x20  6 0x10  4
# the third record of the first user chunk (after two were read) claims 65535
# bytes: an error event, and the rest of the chunk is dropped.  Its records
# are a wide one of 0 bytes (16), a short one of 1 (8 + 8), then the third,
# at 32, whose length is its header's bytes 6-7
seed lying_length 0x0a 40  3 0x01  0 5 0x26 0x10 0x00 2 0xff 0xff  4
# acq_seq one ahead of the log: the reader waits, then steps over after 50 ms
seed acq_stuck 0x0a 40  2 0x31 0 0 0 1  5 0x08  4  10 60  4
# three losses that nobody reported in the ring
seed loss_ring 0x0a 20  2 0x21 0 0 0 3  4
# chunk 1's commit points past its records (descriptors are 128 bytes,
# commit at 64: src/shm/layout.h)
seed commit_past 0x0a 40  3 0x00  0 2 0xc0 0 0 4 0x00 0x10 0 0  4
# free stack and seal counter scribbled on, then the writer takes chunks
seed pool_damage 0x08 30  1 0x29 0 0 0 5 0 0 0 0 0 0 0  2 0x41 0 0 0 2  5 0x3f  5 0x3f  5 0x3f  4
# acquisition-log entry 1 from the future: the reader catches up by scanning
seed acq_future 0x0a 40  1 3 8 0 0 0x01 0 0 0x64 0 0 0 0  4
# the state word says the stream stopped itself
seed autostop 0x0a 40  0 1 0 0 0 1 0x07  4  11
# an empty stream read with a deadline one step ahead: the reader waits once
seed wait_empty 0x0a 0  4  3 0x80  5 0x05  4
# fuzz/crashes-fixed/acq-seq-wrap: acq_seq = 2^64 - 1 and a log entry from the
# future; the reader's next entry must not wrap to 0 (it rescanned for ever)
seed acq_seq_wrap 0x0a 40  1 0x31 0 0 0 0xff 0xff 0xff 0xff 0xff 0xff 0xff 0xff  1 3 0x10 0 0 1 0 0 0x64 0 0 0 0  4
