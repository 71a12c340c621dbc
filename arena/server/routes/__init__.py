"""The server's routes: the JSON API, the site's pages, the organiser's desk, the tables' pages."""
