"""``arena report``: a tournament database as a static web site an organiser can publish."""
