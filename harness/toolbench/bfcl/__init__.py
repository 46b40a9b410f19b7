"""Reading the Berkeley Function Calling Leaderboard's data as toolbench scenarios."""
