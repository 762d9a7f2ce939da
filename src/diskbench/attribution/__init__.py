"""Attribution: which published limit (or client-side cause) bound a measured result, and whether it was steady."""
