"""Who plays whom: the fixed schedule (round robin, balanced tables, duplicate seating) and the
adaptive planner.
"""
