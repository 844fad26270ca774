/*
 * html_assets.c -- the style sheet and the script of the HTML timeline
 * (export_html.c writes the page around them).  No network: everything
 * is inline.
 *
 * The plot is an <svg id="plot"> whose viewBox is in microseconds since
 * the first event drawn (data-off after time 0, --t0) horizontally and pixels vertically, with
 * preserveAspectRatio="none": zooming and panning only change the
 * viewBox.  Markers are <line> elements with vector-effect
 * "non-scaling-stroke", so they keep their width in pixels at any zoom,
 * and a <title> child each (the browser's tooltip).  The script draws the
 * time axis, zooms with the mouse wheel (around the pointer) and the
 * buttons, pans by dragging, shows the hovered event's details below the
 * plot, and hides or shows a type when its legend entry is clicked.
 * Spans are <rect class="sp"> bars in the same plot (html_spans.c); their
 * histograms and p99 plots below are plain SVG.  html_text() is the one
 * escape every part of the page uses.
 */
#include "write.h"

/* Text as XML character data or attribute value. */
void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
	}
}

const char html_css[] =
"body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}\n"
"h1{font-size:18px;margin:0 0 4px}\n"
".sub{color:#666;margin-bottom:10px}\n"
".bar{margin:8px 0;display:flex;gap:6px;align-items:center;flex-wrap:wrap}\n"
"button{font:inherit;padding:2px 10px;border:1px solid #aaa;border-radius:4px;"
"background:#f6f6f6;cursor:pointer}\n"
"button:hover{background:#e8e8e8}\n"
"#range{color:#555;margin-left:8px;font-variant-numeric:tabular-nums}\n"
".tl{display:flex;border:1px solid #ccc;border-radius:4px;overflow:hidden}\n"
".labels{flex:0 0 auto;background:#fafafa;border-right:1px solid #ddd}\n"
".labels text{font-size:12px;fill:#333}\n"
".plotcol{flex:1 1 auto;min-width:200px;cursor:grab}\n"
"#axis text{font-size:11px;fill:#555}\n"
"#axis line{stroke:#bbb}\n"
"#plot line{stroke-width:3px}\n"
"#plot line:hover{stroke-width:7px}\n"
"#plot .lane{fill:#fff}\n#plot .lane.odd{fill:#f4f6fa}\n"
"#detail{margin:8px 0;padding:6px 8px;min-height:3.5em;white-space:pre-wrap;"
"font-family:ui-monospace,monospace;background:#f8f8f8;border:1px solid #e2e2e2;"
"border-radius:4px}\n"
".legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:8px 0}\n"
".legend span{cursor:pointer;user-select:none}\n"
".legend span.off{opacity:.35;text-decoration:line-through}\n"
".sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;"
"vertical-align:-1px}\n"
"table{border-collapse:collapse;margin:6px 0 16px}\n"
"th,td{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:left}\n"
"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
"h2{font-size:15px;margin:16px 0 4px}\n"
"#plot rect.sp{fill-opacity:.6}\n#plot rect.sp:hover{fill-opacity:1}\n"
"#plot rect.sp.k{fill-opacity:.3}\n"
".span{display:inline-block;vertical-align:top;margin:0 18px 12px 0}\n"
".span h3{font-size:13px;margin:8px 0 2px}\n"
".span svg{display:block;margin:2px 0}\n"
".span svg text{font-size:10px;fill:#555}\n"
".span rect.hb:hover{fill-opacity:.6}\n";

const char html_js[] =
"(function(){\n"
"var plot=document.getElementById('plot'),axis=document.getElementById('axis'),\n"
"  col=document.querySelector('.plotcol'),detail=document.getElementById('detail'),\n"
"  range=document.getElementById('range'),SPAN=+plot.dataset.span||1,PAD=+plot.dataset.pad||0,\n"
"  OFF=+plot.dataset.off||0,\n"
"  H=+plot.dataset.height,v0=0,v1=SPAN,NS='http://www.w3.org/2000/svg';\n"
"function fmt(us,step){var s=(us-PAD+OFF)/1e6,d=Math.max(0,Math.min(9,Math.ceil(-Math.log10(step/1e6))));\n"
"  return s.toFixed(d)+' s';}\n"
"function draw(){var w=col.clientWidth;axis.setAttribute('width',w);\n"
"  while(axis.firstChild)axis.removeChild(axis.firstChild);\n"
"  var span=v1-v0,raw=span/Math.max(2,w/110),p=Math.pow(10,Math.floor(Math.log10(raw))),\n"
"    step=raw/p<2?2*p:raw/p<5?5*p:10*p;\n"
"  for(var t=PAD-OFF+Math.ceil((v0-PAD+OFF)/step)*step;t<=v1;t+=step){var x=(t-v0)/span*w;\n"
"    var l=document.createElementNS(NS,'line');l.setAttribute('x1',x);l.setAttribute('x2',x);\n"
"    l.setAttribute('y1',16);l.setAttribute('y2',24);axis.appendChild(l);\n"
"    var tx=document.createElementNS(NS,'text');tx.setAttribute('x',x+2);tx.setAttribute('y',12);\n"
"    tx.textContent=fmt(t,step);axis.appendChild(tx);}\n"
"  range.textContent=fmt(Math.max(v0,PAD),span/100)+' \\u2013 '+fmt(v1,span/100)+'  ('+\n"
"    (SPAN/span).toFixed(1)+'\\u00d7)';}\n"
"function set(a,b){var min=SPAN/1e6+0.001;if(b-a<min){var c=(a+b)/2;a=c-min/2;b=c+min/2;}\n"
"  if(b-a>SPAN){a=0;b=SPAN;}if(a<0){b-=a;a=0;}if(b>SPAN){a-=b-SPAN;b=SPAN;}\n"
"  v0=a;v1=b;plot.setAttribute('viewBox',a+' 0 '+(b-a)+' '+H);draw();}\n"
"function zoom(k,f){var t=v0+f*(v1-v0);set(t-(t-v0)*k,t+(v1-t)*k);}\n"
"plot.addEventListener('wheel',function(e){e.preventDefault();\n"
"  var r=plot.getBoundingClientRect();zoom(e.deltaY<0?0.8:1.25,(e.clientX-r.left)/r.width);},\n"
"  {passive:false});\n"
"var drag=null;plot.addEventListener('mousedown',function(e){drag={x:e.clientX,a:v0,b:v1};\n"
"  col.style.cursor='grabbing';});\n"
"window.addEventListener('mousemove',function(e){if(!drag)return;\n"
"  var d=(e.clientX-drag.x)/col.clientWidth*(drag.b-drag.a);set(drag.a-d,drag.b-d);});\n"
"window.addEventListener('mouseup',function(){drag=null;col.style.cursor='';});\n"
"document.getElementById('zin').onclick=function(){zoom(0.5,0.5);};\n"
"document.getElementById('zout').onclick=function(){zoom(2,0.5);};\n"
"document.getElementById('left').onclick=function(){var d=(v1-v0)/2;set(v0-d,v1-d);};\n"
"document.getElementById('right').onclick=function(){var d=(v1-v0)/2;set(v0+d,v1+d);};\n"
"document.getElementById('reset').onclick=function(){set(0,SPAN);};\n"
"plot.addEventListener('mouseover',function(e){var t=e.target;\n"
"  if((t.tagName==='line'||t.tagName==='rect')&&t.firstChild)\n"
"    detail.textContent=t.firstChild.textContent;});\n"
"var hidden={};document.querySelectorAll('.legend span').forEach(function(s){\n"
"  s.onclick=function(){var c=s.dataset.t;hidden[c]=!hidden[c];s.classList.toggle('off');\n"
"    document.querySelectorAll('#plot line.'+c).forEach(function(l){\n"
"      l.style.display=hidden[c]?'none':'';});};});\n"
"window.addEventListener('resize',draw);set(0,SPAN);\n"
"})();\n";
