"""Seeded text-to-SQL questions with gold SQL and difficulty labels.

Each template pairs a question with its gold query and a parameter query that lists the
values to fill in (countries, artists, ...). A candidate is kept only if its gold query runs
and returns rows. easy = one table; medium = a join or an aggregate over a join;
hard = joins with grouping, HAVING and ordering.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Template:
    key: str
    difficulty: str
    question: str
    sql: str
    params: str | None = None  # a query whose rows (by column name) fill the template


def sql_quote(value: Any) -> str:
    if isinstance(value, int | float):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


C = Template
CHINOOK: list[Template] = [
    C(
        "cust_country",
        "easy",
        "How many customers are from {country}?",
        "SELECT COUNT(*) FROM Customer WHERE Country = {country_q}",
        "SELECT DISTINCT Country AS country FROM Customer",
    ),
    C(
        "cust_names",
        "easy",
        "List the first and last names of the customers from {country}.",
        "SELECT FirstName, LastName FROM Customer WHERE Country = {country_q}",
        "SELECT DISTINCT Country AS country FROM Customer",
    ),
    C(
        "cust_email",
        "easy",
        "What is the email address of the customer {first} {last}?",
        "SELECT Email FROM Customer WHERE FirstName = {first_q} AND LastName = {last_q}",
        "SELECT FirstName AS first, LastName AS last FROM Customer",
    ),
    C(
        "inv_city_total",
        "easy",
        "What is the total amount of all invoices billed to {city}?",
        "SELECT SUM(Total) FROM Invoice WHERE BillingCity = {city_q}",
        "SELECT DISTINCT BillingCity AS city FROM Invoice",
    ),
    C(
        "inv_year",
        "easy",
        "How many invoices were issued in {year}?",
        "SELECT COUNT(*) FROM Invoice WHERE strftime('%Y', InvoiceDate) = {year_q}",
        "SELECT DISTINCT strftime('%Y', InvoiceDate) AS year FROM Invoice",
    ),
    C(
        "track_composer",
        "easy",
        "List the names of the tracks composed by {composer}.",
        "SELECT Name FROM Track WHERE Composer = {composer_q}",
        "SELECT Composer AS composer FROM Track WHERE Composer IS NOT NULL "
        "GROUP BY Composer HAVING COUNT(*) BETWEEN 2 AND 20",
    ),
    C(
        "track_long",
        "easy",
        "How many tracks are longer than {minutes} minutes?",
        "SELECT COUNT(*) FROM Track WHERE Milliseconds > {minutes} * 60000",
        "SELECT value AS minutes FROM (SELECT 3 AS value UNION SELECT 5 UNION SELECT 7 "
        "UNION SELECT 10 UNION SELECT 15 UNION SELECT 20 UNION SELECT 30)",
    ),
    C(
        "emp_city",
        "easy",
        "Which employees (first and last name) live in {city}?",
        "SELECT FirstName, LastName FROM Employee WHERE City = {city_q}",
        "SELECT DISTINCT City AS city FROM Employee",
    ),
    C(
        "album_tracks",
        "medium",
        "How many tracks does the album '{album}' have?",
        "SELECT COUNT(*) FROM Track t JOIN Album a ON a.AlbumId = t.AlbumId "
        "WHERE a.Title = {album_q}",
        "SELECT Title AS album FROM Album",
    ),
    C(
        "artist_albums",
        "medium",
        "List the titles of the albums by the artist '{artist}'.",
        "SELECT al.Title FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId "
        "WHERE ar.Name = {artist_q}",
        "SELECT ar.Name AS artist FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId "
        "GROUP BY ar.ArtistId",
    ),
    C(
        "genre_tracks",
        "medium",
        "How many tracks belong to the genre '{genre}'?",
        "SELECT COUNT(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name = {genre_q}",
        "SELECT Name AS genre FROM Genre",
    ),
    C(
        "cust_spent",
        "medium",
        "What is the total amount spent by the customer {first} {last}?",
        "SELECT SUM(i.Total) FROM Invoice i JOIN Customer c ON c.CustomerId = i.CustomerId "
        "WHERE c.FirstName = {first_q} AND c.LastName = {last_q}",
        "SELECT FirstName AS first, LastName AS last FROM Customer",
    ),
    C(
        "rep_customers",
        "medium",
        "How many customers does the support representative {first} {last} look after?",
        "SELECT COUNT(*) FROM Customer c JOIN Employee e ON e.EmployeeId = c.SupportRepId "
        "WHERE e.FirstName = {first_q} AND e.LastName = {last_q}",
        "SELECT DISTINCT e.FirstName AS first, e.LastName AS last FROM Employee e "
        "JOIN Customer c ON c.SupportRepId = e.EmployeeId",
    ),
    C(
        "playlist_tracks",
        "medium",
        "How many tracks are in the playlist '{playlist}'?",
        "SELECT COUNT(*) FROM PlaylistTrack pt JOIN Playlist p ON p.PlaylistId = pt.PlaylistId "
        "WHERE p.Name = {playlist_q}",
        "SELECT DISTINCT p.Name AS playlist FROM Playlist p "
        "JOIN PlaylistTrack pt ON pt.PlaylistId = p.PlaylistId",
    ),
    C(
        "album_artist",
        "medium",
        "Which artist recorded the album '{album}'?",
        "SELECT ar.Name FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId "
        "WHERE al.Title = {album_q}",
        "SELECT Title AS album FROM Album",
    ),
    C(
        "album_minutes",
        "medium",
        "What is the total running time, in minutes, of the album '{album}'?",
        "SELECT SUM(t.Milliseconds) / 60000.0 FROM Track t JOIN Album a "
        "ON a.AlbumId = t.AlbumId WHERE a.Title = {album_q}",
        "SELECT Title AS album FROM Album",
    ),
    C(
        "top_artists_genre",
        "hard",
        "Which {n} artists have the most tracks in the genre '{genre}'? "
        "Give each artist's name and track count, most first (ties by name).",
        "SELECT ar.Name, COUNT(*) AS tracks FROM Track t "
        "JOIN Album al ON al.AlbumId = t.AlbumId JOIN Artist ar ON ar.ArtistId = al.ArtistId "
        "JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = {genre_q} "
        "GROUP BY ar.ArtistId ORDER BY tracks DESC, ar.Name LIMIT {n}",
        "SELECT g.Name AS genre, n FROM Genre g, (SELECT 3 AS n UNION SELECT 5)",
    ),
    C(
        "countries_min_customers",
        "hard",
        "For each country with at least {n} customers, give the number of customers, "
        "most first (ties by country name).",
        "SELECT Country, COUNT(*) AS customers FROM Customer GROUP BY Country "
        "HAVING COUNT(*) >= {n} ORDER BY customers DESC, Country",
        "SELECT value AS n FROM (SELECT 2 AS value UNION SELECT 3 UNION SELECT 4 UNION SELECT 5)",
    ),
    C(
        "top_genres_sales",
        "hard",
        "Which {n} genres earned the most (sum of unit price times quantity over invoice "
        "lines)? Give genre name and revenue, highest first.",
        "SELECT g.Name, ROUND(SUM(il.UnitPrice * il.Quantity), 2) AS revenue "
        "FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId "
        "JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId "
        "ORDER BY revenue DESC, g.Name LIMIT {n}",
        "SELECT value AS n FROM (SELECT 3 AS value UNION SELECT 5 UNION SELECT 10)",
    ),
    C(
        "top_customer_country",
        "hard",
        "Which customer from {country} spent the most in total? Give first name, last name "
        "and the total.",
        "SELECT c.FirstName, c.LastName, ROUND(SUM(i.Total), 2) AS spent FROM Customer c "
        "JOIN Invoice i ON i.CustomerId = c.CustomerId WHERE c.Country = {country_q} "
        "GROUP BY c.CustomerId ORDER BY spent DESC, c.LastName LIMIT 1",
        "SELECT DISTINCT Country AS country FROM Customer",
    ),
    C(
        "year_country_sales",
        "hard",
        "In {year}, which {n} billing countries had the highest invoice totals? Give country "
        "and total, highest first.",
        "SELECT BillingCountry, ROUND(SUM(Total), 2) AS total FROM Invoice "
        "WHERE strftime('%Y', InvoiceDate) = {year_q} GROUP BY BillingCountry "
        "ORDER BY total DESC, BillingCountry LIMIT {n}",
        "SELECT DISTINCT strftime('%Y', InvoiceDate) AS year, n FROM Invoice, "
        "(SELECT 3 AS n UNION SELECT 5)",
    ),
    C(
        "rep_sales_year",
        "hard",
        "How much did the customers of each support representative spend in {year}? Give the "
        "representative's last name and the total, highest first.",
        "SELECT e.LastName, ROUND(SUM(i.Total), 2) AS total FROM Employee e "
        "JOIN Customer c ON c.SupportRepId = e.EmployeeId "
        "JOIN Invoice i ON i.CustomerId = c.CustomerId "
        "WHERE strftime('%Y', i.InvoiceDate) = {year_q} GROUP BY e.EmployeeId "
        "ORDER BY total DESC, e.LastName",
        "SELECT DISTINCT strftime('%Y', InvoiceDate) AS year FROM Invoice",
    ),
    C(
        "artist_albums_min_tracks",
        "hard",
        "Which albums by '{artist}' have more than {n} tracks? Give title and track count, "
        "most first.",
        "SELECT al.Title, COUNT(*) AS tracks FROM Album al "
        "JOIN Artist ar ON ar.ArtistId = al.ArtistId JOIN Track t ON t.AlbumId = al.AlbumId "
        "WHERE ar.Name = {artist_q} GROUP BY al.AlbumId HAVING COUNT(*) > {n} "
        "ORDER BY tracks DESC, al.Title",
        "SELECT ar.Name AS artist, 10 AS n FROM Artist ar JOIN Album al "
        "ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId HAVING COUNT(*) >= 3",
    ),
]

SHOP: list[Template] = [
    C(
        "s_city",
        "easy",
        "How many customers live in {city}?",
        "SELECT COUNT(*) FROM customers WHERE city = {city_q}",
        "SELECT DISTINCT city FROM customers",
    ),
    C(
        "s_category",
        "easy",
        "List the names and prices of the products in the category '{category}'.",
        "SELECT name, price FROM products WHERE category = {category_q}",
        "SELECT DISTINCT category FROM products",
    ),
    C(
        "s_status",
        "easy",
        "How many orders have the status '{status}'?",
        "SELECT COUNT(*) FROM orders WHERE status = {status_q}",
        "SELECT DISTINCT status FROM orders",
    ),
    C(
        "s_cust_orders",
        "medium",
        "How many orders has {name} placed?",
        "SELECT COUNT(*) FROM orders o JOIN customers c ON c.id = o.customer_id "
        "WHERE c.name = {name_q}",
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id",
    ),
    C(
        "s_product_qty",
        "medium",
        "What total quantity of '{product}' has been ordered?",
        "SELECT SUM(oi.quantity) FROM order_items oi JOIN products p ON p.id = oi.product_id "
        "WHERE p.name = {product_q}",
        "SELECT p.name AS product FROM products p JOIN order_items oi "
        "ON oi.product_id = p.id GROUP BY p.name HAVING COUNT(DISTINCT p.id) = 1",
    ),
    C(
        "s_top_revenue",
        "hard",
        "Which {n} products brought in the most revenue (price times "
        "quantity, cancelled orders excluded)? Give name and revenue, highest first.",
        "SELECT p.name, ROUND(SUM(p.price * oi.quantity), 2) AS revenue FROM order_items oi "
        "JOIN products p ON p.id = oi.product_id JOIN orders o ON o.id = oi.order_id "
        "WHERE o.status != 'cancelled' GROUP BY p.id ORDER BY revenue DESC, p.name LIMIT {n}",
        "SELECT value AS n FROM (SELECT 3 AS value UNION SELECT 5)",
    ),
    C(
        "s_country_orders",
        "hard",
        "For each country, how many orders did its customers place "
        "in {year}? Most first (ties by country).",
        "SELECT c.country, COUNT(*) AS orders FROM orders o JOIN customers c "
        "ON c.id = o.customer_id WHERE substr(o.order_date, 1, 4) = {year_q} "
        "GROUP BY c.country ORDER BY orders DESC, c.country",
        "SELECT DISTINCT substr(order_date, 1, 4) AS year FROM orders",
    ),
    C(
        "s_big_spenders",
        "hard",
        "Which customers spent more than {amount} in total on "
        "delivered orders? Give name and amount, highest first.",
        "SELECT c.name, ROUND(SUM(p.price * oi.quantity), 2) AS spent FROM customers c "
        "JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id "
        "JOIN products p ON p.id = oi.product_id WHERE o.status = 'delivered' "
        "GROUP BY c.id HAVING SUM(p.price * oi.quantity) > {amount} ORDER BY spent DESC, c.name",
        "SELECT value AS amount FROM (SELECT 500 AS value UNION SELECT 1000 UNION SELECT 1500)",
    ),
]


@dataclass(frozen=True)
class SqlQuestion:
    key: str
    difficulty: str
    question: str
    sql: str
    db_id: str


def _fill(template: Template, params: dict[str, Any]) -> tuple[str, str]:
    values = dict(params)
    values.update({f"{k}_q": sql_quote(v) for k, v in params.items()})
    return template.question.format(**values), template.sql.format(**values)


def _param_rows(conn: sqlite3.Connection, template: Template) -> list[dict[str, Any]]:
    if template.params is None:
        return [{}]
    cursor = conn.execute(template.params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def generate_for(
    db_path: Path, db_id: str, templates: list[Template], per_template: int, rng: random.Random
) -> list[SqlQuestion]:
    """Up to `per_template` questions per template whose gold query returns rows."""
    out: list[SqlQuestion] = []
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        for template in templates:
            rows = _param_rows(conn, template)
            rng.shuffle(rows)
            kept = 0
            for params in rows:
                if kept >= per_template:
                    break
                question, sql = _fill(template, params)
                result = conn.execute(sql).fetchall()
                if not result or result == [(None,)] or result == [(0,)]:
                    continue
                out.append(SqlQuestion(template.key, template.difficulty, question, sql, db_id))
                kept += 1
    finally:
        conn.close()
    return out
