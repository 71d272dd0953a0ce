#!/usr/bin/env bash
# test_typed_agents.sh on an S3 warehouse (catalog s3, the S3 stub): eight agents with
# differing column lists commit to one table at once, by conditional PUTs.
TYPED_AGENTS_S3=1 exec bash "$(dirname "$0")/test_typed_agents.sh"
