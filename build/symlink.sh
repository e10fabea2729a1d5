#!/bin/sh
# symlink.sh TARGET LINK: makes LINK a symbolic link to TARGET, replacing it.
ln -sfn "$1" "$2"
