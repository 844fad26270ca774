/*
 * cli_html.c -- the HTML timeline rendered by a real browser: chromium
 * (headless) takes a 1200x800 screenshot of the exported page; the PNG
 * exists and is far larger than a blank page's (the timeline, the axis
 * drawn by the script, the tables).  Then the page's script is driven by
 * a few lines added to a copy of it, and the DOM dumped: the axis has
 * ticks, "zoom in" halves the visible span, a wheel event zooms further,
 * pointing at a marker shows its details, clicking a legend entry hides
 * that type's markers.  Skipped without chromium.
 */
#include <sys/stat.h>
#include <trace.h>
#include "t.h"
#include "cli_util.h"

int main(void)
{
	char *out = NULL, *err = NULL;

	T_BEGIN(180);
	const char *chromium = cli_which("chromium");
	if (!chromium)
		chromium = cli_which("chromium-browser");
	if (!chromium)
		T_SKIP("chromium is not installed (Debian: chromium)");
	if (!cli_which("timeout"))
		T_SKIP("no timeout(1) to bound the browser");
	cli_setup();
	const char *log = cli_path("app.ptlog"), *html = cli_path("app.html");
	const char *png = cli_path("shot.png"), *blank = cli_path("blank.html");
	REQUIRE(cli_record_app(log, "0") == 0);
	CHECK_EQ(cli_run(CLI("export", "--format", "html", (char *)log, "-o", (char *)html), NULL, NULL), 0);

	/* a reference: an empty page */
	FILE *f = fopen(blank, "w");
	REQUIRE(f != NULL);
	fputs("<!DOCTYPE html><html><body></body></html>\n", f);
	fclose(f);
	long size[2] = { 0, 0 };
	const char *pages[2] = { html, blank };
	for (int i = 0; i < 2; i++) {
		char cmd[1400];
		unlink(png);
		snprintf(cmd, sizeof cmd, "HOME='%s' timeout 90 '%s' --headless --no-sandbox --disable-gpu "
		         "--screenshot='%s' --window-size=1200,800 'file://%s'", cli_dir, chromium, png,
		         pages[i]);
		int rc = cli_run((char *const[]){ "/bin/sh", "-c", cmd, NULL }, &out, &err);
		CHECK_EQ(rc, 0);
		if (rc)
			fprintf(stderr, "%s\n", err ? err : "");
		struct stat sb;
		CHECK(stat(png, &sb) == 0);
		size[i] = stat(png, &sb) == 0 ? (long)sb.st_size : 0;
		char *p = cli_slurp(png);
		CHECK(p && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0);
		free(p);
		free(out);
		free(err);
	}
	/* drive the script */
	char *page = cli_slurp(html);
	REQUIRE(page != NULL);
	char *end = strstr(page, "</body>");
	REQUIRE(end != NULL);
	const char *drive = cli_path("drive.html");
	f = fopen(drive, "w");
	REQUIRE(f != NULL);
	fwrite(page, 1, (size_t)(end - page), f);
	fputs("<script>(function(){var p=document.getElementById('plot'),r=[];\n"
	      "function w(){return +p.getAttribute('viewBox').split(' ')[2];}\n"
	      "r.push(document.querySelectorAll('#axis text').length);r.push(w());\n"
	      "document.getElementById('zin').click();r.push(w());\n"
	      "var b=p.getBoundingClientRect();p.dispatchEvent(new WheelEvent('wheel',{deltaY:-100,\n"
	      " clientX:b.left+b.width/2,clientY:b.top+5,bubbles:true,cancelable:true}));r.push(w());\n"
	      "var l=p.querySelector('line.t18');l.dispatchEvent(new MouseEvent('mouseover',{bubbles:true}));\n"
	      "r.push(document.getElementById('detail').textContent===l.firstChild.textContent?1:0);\n"
	      "document.querySelector('.legend span[data-t=t18]').click();\n"
	      "r.push(getComputedStyle(l).display==='none'?1:0);\n"
	      "document.body.setAttribute('data-result',r.join(' '));})();</script>\n", f);
	fputs(end, f);
	fclose(f);
	free(page);
	char cmd[1400];
	snprintf(cmd, sizeof cmd, "HOME='%s' timeout 90 '%s' --headless --no-sandbox --disable-gpu "
	         "--window-size=1200,800 --dump-dom 'file://%s'", cli_dir, chromium, drive);
	CHECK_EQ(cli_run((char *const[]){ "/bin/sh", "-c", cmd, NULL }, &out, &err), 0);
	char *res = out ? strstr(out, "data-result=\"") : NULL;
	int ticks = 0, ok_detail = 0, ok_hide = 0;
	double w0 = 0, w1 = 0, w2 = 0;
	CHECK(res && sscanf(res, "data-result=\"%d %lf %lf %lf %d %d", &ticks, &w0, &w1, &w2,
	                    &ok_detail, &ok_hide) == 6);
	CHECK(ticks >= 3);
	CHECK(w0 > 0 && w1 > w0 * 0.49 && w1 < w0 * 0.51);   /* zoom in: half */
	CHECK(w2 > w1 * 0.79 && w2 < w1 * 0.81);             /* wheel: 0.8 */
	CHECK_EQ(ok_detail, 1);
	CHECK_EQ(ok_hide, 1);
	if (!res)
		fprintf(stderr, "no result in the dumped page:\n%.500s\n", err ? err : "");
	free(out);
	free(err);

	if (size[0] < 20000 || size[0] < 4 * size[1])
		fprintf(stderr, "screenshot: %ld bytes, a blank page's: %ld\n", size[0], size[1]);
	CHECK(size[0] > 20000);
	CHECK(size[0] > 4 * size[1]);
	T_END();
}
