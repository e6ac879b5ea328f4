"""Phase 5: write the site into a staging folder with its downloads and checksums, then swap it in."""
