"""Azure: VM sizes, managed disks and the published limits that bound what a benchmark can measure."""
