# Writes feedgen-atom.xml and feedgen-rss.xml: search results as a feed,
# with text, html and xhtml constructs (feedgen 1.0.0).
import datetime
from feedgen.feed import FeedGenerator

when = datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.timezone.utc)
fg = FeedGenerator()
fg.id('http://example.org/search?q=vector')
fg.title('Search results for "vector <int>"')
fg.link(href='http://example.org/search?q=vector', rel='self')
fg.link(href='http://example.org/', rel='alternate')
fg.description('Search results for "vector <int>"')
fg.updated(when)
entries = [
    # (url, title, summary, summary type, content, content type)
    ('http://example.org/docs/vector.html', 'std::vector<int> & a <b> tag', 'Use a <b> tag for bold & <strong>vector</strong> for arrays.', None, None, None),
    ('http://example.org/docs/html.html', 'HTML summary', 'Near <strong>duplicate</strong> pages &amp; <i>mirrors</i>', 'html', None, None),
    ('http://example.org/docs/text.html', 'Plain comparison', 'x < y && y > z', 'text', None, None),
    ('http://example.org/docs/xhtml.html', 'XHTML content', None, None, '<p>An <em>xhtml</em> body with &lt;b&gt; as text</p>', 'xhtml'),
]
for url, title, summary, stype, content, ctype in reversed(entries):
    fe = fg.add_entry()
    fe.id(url)
    fe.title(title)
    fe.link(href=url, rel='alternate')
    fe.updated(when)
    fe.published(when)
    if summary is not None:
        fe.summary(summary, type=stype)
    if content is not None:
        fe.content(content, type=ctype)
fg.atom_file('feedgen-atom.xml', pretty=True)
fg.rss_file('feedgen-rss.xml', pretty=True)
