"""Azure's published limits and how a benchmark target meets them.

disks.py: what a managed disk may deliver (tiers, Premium SSD v2 and Ultra rules); vms.py: what a
VM size may deliver (uncached, cached, temp, NVMe, burst); targets.py: which of those apply to one
target on one machine (the path its I/O takes); bounds.py: a profile's Azure machine and target
turned into the tables' terms. All offline arithmetic over the bundled data (``../data``).
"""
