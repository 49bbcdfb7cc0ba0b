/*
 * pages.c: the page server of browser tests.
 */
#include "pages.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAGES_N_MAX 200000 /* ?n= of a page made by code */

static char *pages_links(long n);
static char *pages_nodes(long n);
static char *pages_quiet(long n);
static char *pages_frames(long n);
static char *pages_xlogin(long n);

/*
 * The site.  A body or a redirect may name the server's own port as %d:
 * "localhost" and "127.0.0.1" reach the same server under two hosts, so a
 * test can allow one and refuse the other.  A page made by code (made[])
 * has no body here.
 */
static const struct {
	const char *path;
	const char *body;
	const char *location; /* a 302 to here, when not NULL */
} site[] = {
    {"/",
        "<!doctype html><html><head><title>Home</title></head><body>"
        "<h1>Welcome</h1><p>The spaced test site.</p>"
        "<a href=\"/next\">Next page</a>"
        "<form action=\"/search\"><input name=\"q\" aria-label=\"Query\">"
        "<button type=\"submit\">Search</button></form></body></html>",
        NULL},
    /* /ticker: a counter that changes every 30 ms, so the page paints
     * all the time (a live view's frames at their rate bound). */
    {"/ticker",
        "<!doctype html><html><head><title>Ticker</title></head><body>"
        "<h1 id=\"t\">0</h1><script>let n=0;setInterval(function(){"
        "document.getElementById('t').textContent=++n;},30);</script>"
        "</body></html>",
        NULL},
    {"/next",
        "<!doctype html><html><head><title>Next</title></head><body>"
        "<h1>Second page</h1><p>You followed the link.</p>"
        "</body></html>",
        NULL},
    {"/search",
        "<!doctype html><html><head><title>Results</title></head><body>"
        "<h1>Results</h1><p>You searched the site.</p></body></html>",
        NULL},
    {"/redirect", "", "http://localhost:%d/next"},
    {"/sub",
        "<!doctype html><html><head><title>Sub</title></head><body>"
        "<h1>With a picture</h1>"
        "<img alt=\"pixel\" src=\"http://localhost:%d/pixel\">"
        "</body></html>",
        NULL},
    {"/pixel", "not really a picture", NULL},
    /* A tall canvas of random pixels: a full-page PNG of it is far over
     * any bound (1280 x 3000 x 4 bytes that do not compress). */
    {"/noise",
        "<!doctype html><html><head><title>Noise</title></head><body>"
        "<canvas id=\"c\" width=\"1280\" height=\"3000\"></canvas>"
        "<script>const x=document.getElementById('c').getContext('2d');"
        "const d=x.createImageData(1280,3000);"
        "for(let i=0;i<d.data.length;i++)d.data[i]=(Math.random()*256)|0;"
        "x.putImageData(d,0,0);</script></body></html>",
        NULL},
    /* A page that asks /gate every 50 ms and, once the test has opened
     * the gate, blocks its main thread in a synchronous request that is
     * never answered: nothing the browser asks of it is answered any
     * more. */
    {"/stuck",
        "<!doctype html><html><head><title>Stuck</title></head><body>"
        "<h1>Stuck</h1><script>function ask(){fetch('/gate')"
        ".then(function(r){return r.text();}).then(function(t){"
        "if(t!=='open'){setTimeout(ask,50);return;}"
        "var x=new XMLHttpRequest();x.open('GET','/hang',false);"
        "try{x.send();}catch(e){}}).catch(function(){setTimeout(ask,50);});}"
        "ask();</script></body></html>",
        NULL},
    {"/gate", "shut", NULL},
    {"/hang", "", NULL},
    /* What the browser keeps for the site: the cookies it sent (and, with
     * ?set=NAME, a cookie NAME to keep), and the page's own script shows
     * localStorage's "mark" (and with ?set=NAME stores NAME there). */
    {"/cookie",
        "<!doctype html><html><head><title>Jar</title></head><body>"
        "<h1>Jar</h1><p id=\"c\">cookies: %s.</p><p id=\"s\"></p>"
        "<script>const m=/[?]set=([a-z0-9]+)/.exec(location.search);"
        "if(m)localStorage.setItem('mark',m[1]);"
        "document.getElementById('s').textContent='storage: '+"
        "(localStorage.getItem('mark')||'none')+'.';</script>"
        "</body></html>",
        NULL},
    /* A long page: ?n=N links in a list, "Link K" to /next?i=K. */
    {"/links", NULL, NULL},
    /* A big page: ?n=N elements of every-day kinds, in sections of ten
     * (a heading, a paragraph with bold text and a link, a list with an
     * item and a button, a field). */
    {"/nodes", NULL, NULL},
    /* A page that says nothing for long: ?n=N elements that print no
     * line (a div holding a span, N/2 times), then a link "End". */
    {"/quiet", NULL, NULL},
    /* A page whose scripts replace what a script reading it would use
     * (Array's push, Set's has, getAttribute, getComputedStyle, the
     * title), and set a list of refs of their own. */
    {"/tamper",
        "<!doctype html><html><head><title>Tamper</title><script>"
        "Array.prototype.push=function(){throw new Error('no');};"
        "Set.prototype.has=function(){return false;};"
        "Element.prototype.getAttribute=function(){return 'x';};"
        "window.getComputedStyle=function(){return {display:'none'};};"
        "Object.defineProperty(Document.prototype,'title',"
        "{get:function(){return 'Fake';}});"
        "window.spacedRefs=[document.documentElement];</script></head>"
        "<body><h1>Untouched</h1><a href=\"/next\">Next page</a>"
        "</body></html>",
        NULL},
    /* Pages that open a dialog as they load: an alert, and a prompt
     * whose text and default carry what the redactor hides. */
    {"/alert",
        "<!doctype html><html><head><title>Notice</title></head><body>"
        "<h1>Notice</h1><script>alert('Your draft was saved');</script>"
        "</body></html>",
        NULL},
    {"/prompt",
        "<!doctype html><html><head><title>Sign in</title></head><body>"
        "<h1>Sign in</h1><script>prompt('Session expired: "
        "token=tk-4f9a2c7e1b, sign in again','password=hunter2hunter2');"
        "</script></body></html>",
        NULL},
    /* A shop whose cookie banner, fixed at the top, covers its Buy
     * button until it is accepted; a button that is disabled and one
     * that is hidden.  A click that lands shows in the title. */
    {"/banner",
        "<!doctype html><html><head><title>Shop</title><style>"
        "#bar{position:fixed;top:0;left:0;width:100%;height:120px}"
        "#bar button{width:100%;height:120px}</style></head><body>"
        "<button id=\"buy\" onclick=\"document.title='Bought'\">Buy</button>"
        "<button id=\"off\" disabled>Sold out</button>"
        "<button id=\"ghost\" style=\"visibility:hidden\">Ghost</button>"
        "<div id=\"bar\"><button onclick=\"document.getElementById('bar')"
        ".remove()\">Accept cookies</button></div></body></html>",
        NULL},
    /* A button that a layer covers as the pointer comes to it: the press
     * goes to the layer, which the check before it could not see. */
    {"/sneaky",
        "<!doctype html><html><head><title>Sneaky</title><style>"
        "#layer{display:none;position:fixed;top:0;left:0;width:100%;"
        "height:100%}</style></head><body>"
        "<button id=\"buy\" onclick=\"document.title='Bought'\">Buy</button>"
        "<div id=\"layer\" onclick=\"document.title='Layer'\"></div><script>"
        "addEventListener('mousemove',function(){"
        "document.getElementById('layer').style.display='block';});"
        "</script></body></html>",
        NULL},
    /* Controls of every kind: those that take typed text and those that
     * take none. */
    {"/controls",
        "<!doctype html><html><head><title>Form</title></head><body>"
        "<select id=\"s\" aria-label=\"Size\"><option>S</option>"
        "<option>M</option></select>"
        "<input id=\"r\" type=\"range\" aria-label=\"Volume\">"
        "<input id=\"d\" type=\"date\" aria-label=\"Day\">"
        "<input id=\"f\" type=\"file\" aria-label=\"Photo\">"
        "<input id=\"c\" type=\"checkbox\" aria-label=\"Agree\">"
        "<input id=\"t\" aria-label=\"Name\">"
        "<input id=\"ro\" aria-label=\"Fixed\" value=\"fixed\" readonly>"
        "<textarea id=\"a\" aria-label=\"Note\"></textarea>"
        "<div id=\"e\" contenteditable=\"true\" role=\"textbox\" "
        "aria-label=\"Bio\"></div>"
        "<p id=\"echo\"></p><script>for(const id of ['t','a'])"
        "document.getElementById(id).addEventListener('input',function(){"
        "document.getElementById('echo').textContent=id+'='+this.value;});"
        "</script></body></html>",
        NULL},
    /* A sign-in form: what a browser's password manager looks at. */
    {"/login",
        "<!doctype html><html><head><title>Sign in</title></head><body>"
        "<form action=\"/next\"><input name=\"user\" "
        "autocomplete=\"username\" aria-label=\"User\">"
        "<input name=\"pw\" type=\"password\" "
        "autocomplete=\"current-password\" aria-label=\"Password\">"
        "<button type=\"submit\">Sign in</button></form></body></html>",
        NULL},
    /* A single-page app: its link moves within the document
     * (history.pushState), and going back is a popstate. */
    {"/spa",
        "<!doctype html><html><head><title>Inbox</title></head><body>"
        "<h1 id=\"h\">Inbox</h1><a id=\"go\" href=\"/spa/item\">Open "
        "item</a><script>function show(t){document.title=t;"
        "document.getElementById('h').textContent=t;}"
        "document.getElementById('go').addEventListener('click',"
        "function(e){e.preventDefault();history.pushState({},'',"
        "'/spa/item');show('Item');});"
        "addEventListener('popstate',function(){show('Inbox');});"
        "</script></body></html>",
        NULL},
    /* A page whose one picture never comes (/hang): it parses, and never
     * loads. */
    {"/pending",
        "<!doctype html><html><head><title>Pending</title></head><body>"
        "<h1>Almost there</h1><img alt=\"tracker\" src=\"/hang\">"
        "<a href=\"/next\">Next page</a></body></html>",
        NULL},
    /* A page that asks before it is left (once a person has acted on
     * it: the browser asks only then). */
    {"/leave",
        "<!doctype html><html><head><title>Draft</title></head><body>"
        "<h1>Unsaved draft</h1><button id=\"b\" onclick=\"this."
        "textContent='Edited'\">Edit</button><script>"
        "addEventListener('beforeunload',function(e){e.preventDefault();"
        "e.returnValue='';});</script></body></html>",
        NULL},
    /* A file to download (served as an attachment), and a page that
     * links to it. */
    {"/file", "quarterly figures\n", NULL},
    {"/files",
        "<!doctype html><html><head><title>Files</title></head><body>"
        "<a id=\"dl\" href=\"/file\">Report</a></body></html>",
        NULL},
    /* An order page whose title repeats words of its body. */
    {"/order",
        "<!doctype html><html><head><title>Order summary for Alice"
        "</title></head><body><h1>Order summary</h1><p>Alice</p>"
        "<p>summary</p><a href=\"/next\">Pay now</a></body></html>",
        NULL},
    /* A page that changes later: its button shows "Ready" 300 ms after
     * a click, and its link leads to /next 200 ms after one. */
    {"/later",
        "<!doctype html><html><head><title>Later</title></head><body>"
        "<button id=\"show\" onclick=\"setTimeout(function(){"
        "document.getElementById('out').textContent='Ready';},300)\">"
        "Reveal</button><button id=\"go\" onclick=\"setTimeout("
        "function(){location.assign('/next');},200)\">Go later</button>"
        "<p id=\"out\"></p></body></html>",
        NULL},
    /* Pages that open others: a link to a new tab, and a script's
     * window.open.  A click that lands shows in the title. */
    {"/popup",
        "<!doctype html><html><head><title>Opener</title></head><body>"
        "<a id=\"tab\" href=\"/next\" target=\"_blank\">New tab</a>"
        "<button id=\"win\" onclick=\"window.open('/search')\">"
        "Window</button><button id=\"mark\" onclick=\"document.title="
        "'Marked'\">Mark</button></body></html>",
        NULL},
    /* The pages of the snapshot's content.  /state: controls in every
     * state a snapshot shows, some set by script after load (so only
     * the live DOM has them), the email field focused. */
    {"/state",
        "<!doctype html><html><head><title>State</title></head><body>"
        "<form><input id=\"email\" aria-label=\"Email\" required "
        "value=\"me@x.org\"><input id=\"pw\" type=\"password\" "
        "aria-label=\"Password\" value=\"hunter2secret\">"
        "<label><input id=\"rem\" type=\"checkbox\">Remember me</label>"
        "<label><input id=\"some\" type=\"checkbox\">Some</label>"
        "<select id=\"size\" aria-label=\"Size\"><option>Small</option>"
        "<option>Large</option></select>"
        "<input id=\"vol\" type=\"range\" aria-label=\"Volume\" "
        "min=\"0\" max=\"10\" value=\"3\">"
        "<input type=\"date\" aria-label=\"Day\" value=\"2024-05-06\">"
        "<button aria-pressed=\"true\">Bold</button>"
        "<button aria-expanded=\"false\">Menu</button>"
        "<button disabled>Send</button>"
        "<div contenteditable=\"true\" aria-label=\"Notes\">Draft "
        "text</div></form><script>"
        "document.getElementById('some').indeterminate=true;"
        "document.getElementById('email').value='you@y.org';"
        "document.getElementById('email').focus();</script></body></html>",
        NULL},
    /* /clickables: what a person can click that has no role: a span
     * with a click handler and a pointer (its child inherits it), a
     * div in the tab order, an onclick attribute, a list item with a
     * pointer; a slider's handle; and, in an open shadow root, an
     * element with a listener alone. */
    {"/clickables",
        "<!doctype html><html><head><title>Clickables</title></head><body>"
        "<h1>Clickables</h1><span id=\"go\" style=\"cursor:pointer\">"
        "<b>Open</b> it</span><div tabindex=\"0\">Tab stop</div>"
        "<div onclick=\"0\">Old style</div><ul><li style=\"cursor:"
        "pointer\">Card</li></ul><div role=\"slider\" aria-label=\"Level\" "
        "aria-valuenow=\"4\" tabindex=\"0\"></div><p>Plain text</p>"
        "<div id=\"lone\">Only a listener</div><div id=\"host\"></div>"
        "<script>const sr=document.getElementById('host').attachShadow("
        "{mode:'open'});sr.innerHTML='<div id=\"deep\">In a shadow</div>';"
        "sr.getElementById('deep').addEventListener('click',function(){"
        "document.title='Deep';});"
        "document.getElementById('go').addEventListener('click',"
        "function(){document.title='Opened';});document.getElementById("
        "'lone').addEventListener('click',function(){document.title="
        "'Heard';});document.body.addEventListener('click',function(){});"
        "</script></body></html>",
        NULL},
    /* /article: a paragraph far longer than a name's bound. */
    {"/article",
        "<!doctype html><html><head><title>Article</title></head><body>"
        "<h1>Article</h1><p>Lorem ipsum dolor sit amet, consectetur "
        "adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
        "dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
        "exercitation ullamco laboris nisi ut aliquip ex ea commodo "
        "consequat. Duis aute irure dolor in reprehenderit in voluptate "
        "velit esse cillum dolore eu fugiat nulla pariatur. THE END</p>"
        "<a href=\"/next\">Next page</a></body></html>",
        NULL},
    /* A form's pages.  /form2: a field of every kind fill sets, some
     * prefilled, and a log of the input and change events the page got
     * (with the value each saw). */
    {"/form2",
        "<!doctype html><html><head><title>Fill</title></head><body>"
        "<input id=\"t\" aria-label=\"Name\" value=\"Old value\">"
        "<textarea id=\"a\" aria-label=\"Note\">old note</textarea>"
        "<div id=\"e\" contenteditable=\"true\" role=\"textbox\" "
        "aria-label=\"Bio\">old bio</div>"
        "<input id=\"n\" type=\"number\" aria-label=\"Count\">"
        "<input id=\"d\" type=\"date\" aria-label=\"Day\">"
        "<input id=\"tm\" type=\"time\" aria-label=\"Hour\">"
        "<input id=\"dl\" type=\"datetime-local\" aria-label=\"When\">"
        "<input id=\"mo\" type=\"month\" aria-label=\"Month\">"
        "<input id=\"wk\" type=\"week\" aria-label=\"Week\">"
        "<input id=\"r\" type=\"range\" min=\"0\" max=\"10\" "
        "aria-label=\"Level\">"
        "<input id=\"co\" type=\"color\" aria-label=\"Tint\">"
        "<input id=\"c\" type=\"checkbox\" aria-label=\"Agree\">"
        "<input id=\"ro\" aria-label=\"Fixed\" value=\"fixed\" readonly>"
        "<p id=\"log\"></p><script>const log=document.getElementById('log');"
        "for(const k of ['input','change'])document.addEventListener(k,"
        "function(e){const t=e.target;log.textContent+=' '+k+':'+t.id+'='+"
        "(t.value===undefined?t.innerText:t.value);});</script>"
        "</body></html>",
        NULL},
    /* /select: a select of one (whose Large is disabled), a multiple one,
     * a text field, and a log of their input and change events. */
    {"/select",
        "<!doctype html><html><head><title>Pick</title></head><body>"
        "<select id=\"one\" aria-label=\"Size\"><option value=\"s\">"
        "Small</option><option value=\"m\">Medium</option>"
        "<option value=\"l\" disabled>Large</option></select>"
        "<select id=\"many\" multiple aria-label=\"Toppings\">"
        "<option value=\"ch\">Cheese</option><option value=\"ol\">Olives"
        "</option><option value=\"mu\">Mushrooms</option></select>"
        "<input id=\"t\" aria-label=\"Name\"><p id=\"log\"></p><script>"
        "const log=document.getElementById('log');"
        "for(const k of ['input','change'])document.addEventListener(k,"
        "function(e){log.textContent+=' '+k+':'+e.target.id+'='+"
        "Array.from(e.target.selectedOptions||[]).map(o=>o.value)"
        ".join(',');});</script></body></html>",
        NULL},
    /* /checks: a checkbox, two radio buttons of a group (Red checked), a
     * switch its script toggles, and a checkbox by role that no script
     * toggles; a log of their changes. */
    {"/checks",
        "<!doctype html><html><head><title>Checks</title><style>"
        "[role]{width:60px;height:20px;background:#ccc}</style></head><body>"
        "<input id=\"c\" type=\"checkbox\" aria-label=\"Agree\">"
        "<input id=\"r1\" type=\"radio\" name=\"g\" aria-label=\"Red\" "
        "checked><input id=\"r2\" type=\"radio\" name=\"g\" "
        "aria-label=\"Blue\"><div id=\"sw\" role=\"switch\" "
        "aria-checked=\"false\" tabindex=\"0\">Dark mode</div>"
        "<div id=\"stuck\" role=\"checkbox\" aria-checked=\"false\" "
        "tabindex=\"0\">Locked</div><input id=\"t\" aria-label=\"Name\">"
        "<p id=\"log\"></p><script>const log=document.getElementById('log'),"
        "sw=document.getElementById('sw');sw.addEventListener('click',"
        "function(){sw.setAttribute('aria-checked',String(sw.getAttribute("
        "'aria-checked')!=='true'));log.textContent+=' sw='+sw.getAttribute("
        "'aria-checked');});document.addEventListener('change',function(e){"
        "log.textContent+=' '+e.target.id+'='+e.target.checked;});</script>"
        "</body></html>",
        NULL},
    /* /menu: a menu that opens on :hover (its link Laptops to /next),
     * and one that a mouseenter handler opens (its Sign out button
     * titles the page). */
    {"/menu",
        "<!doctype html><html><head><title>Menu</title><style>"
        "#m .items{display:none}#m:hover .items{display:block}</style>"
        "</head><body><nav id=\"m\"><button id=\"top\">Products</button>"
        "<div class=\"items\"><a id=\"item\" href=\"/next\">Laptops</a>"
        "</div></nav><div id=\"acct\">Account</div><div id=\"acctitems\" "
        "hidden><button id=\"out\" onclick=\"document.title='Signed out'\">"
        "Sign out</button></div><script>const a=document.getElementById("
        "'acct');a.addEventListener('mouseenter',function(){document."
        "getElementById('acctitems').hidden=false;});</script>"
        "</body></html>",
        NULL},
    /* /drag: a list whose items are HTML5 draggables, and a drop zone
     * that takes them in (the title names the one dropped). */
    {"/drag",
        "<!doctype html><html><head><title>Drag</title></head><body>"
        "<ul><li id=\"apple\" draggable=\"true\">Apple</li>"
        "<li id=\"pear\" draggable=\"true\">Pear</li></ul>"
        "<div id=\"zone\" style=\"width:200px;height:100px;border:1px "
        "solid\">Basket: </div><script>for(const li of document."
        "querySelectorAll('li'))li.addEventListener('dragstart',function(e){"
        "e.dataTransfer.setData('text/plain',li.id);});"
        "const z=document.getElementById('zone');z.addEventListener("
        "'dragover',function(e){e.preventDefault();});z.addEventListener("
        "'drop',function(e){e.preventDefault();const id=e.dataTransfer."
        "getData('text/plain');z.appendChild(document.getElementById(id));"
        "document.title='Dropped '+id;});</script></body></html>",
        NULL},
    /* /dragcover: a card and a tray, and a sheet that covers the whole
     * page as the card is pressed (as a page's modal does): a release
     * over the tray goes to the sheet. */
    {"/dragcover",
        "<!doctype html><html><head><title>Cover</title><style>"
        "#sheet{position:fixed;inset:0;background:rgba(0,0,0,.3)}"
        "#card,#tray{width:120px;height:40px}</style></head><body>"
        "<div id=\"card\">Card</div><div id=\"tray\">Tray</div>"
        "<script>document.getElementById('card').addEventListener("
        "'mousedown',function(){const s=document.createElement('div');"
        "s.id='sheet';document.body.appendChild(s);});"
        "document.getElementById('tray').addEventListener('mouseup',"
        "function(){document.title='Landed';});</script></body></html>",
        NULL},
    /* /slider: a knob that follows the mouse while it is pressed, on a
     * track 300 px wide, to a mark at its end; #out says where the knob
     * is, after how many moves, and the release. */
    {"/slider",
        "<!doctype html><html><head><title>Slider</title><style>"
        "div{height:20px}#track{position:relative;width:300px;background:"
        "#ddd}#knob{position:absolute;left:0;top:0;width:20px;background:"
        "#333}#end{width:20px;margin-left:280px;background:#9c9}</style>"
        "</head><body><div id=\"track\"><div id=\"knob\"></div></div>"
        "<div id=\"end\"></div><p id=\"out\">at 0</p><script>"
        "const k=document.getElementById('knob'),o=document.getElementById("
        "'out');let down=false,moves=0;k.addEventListener('mousedown',"
        "function(e){down=true;e.preventDefault();});addEventListener("
        "'mousemove',function(e){if(!down)return;moves++;const r=document."
        "getElementById('track').getBoundingClientRect();const x=Math.max(0,"
        "Math.min(280,Math.round(e.clientX-r.left-10)));k.style.left=x+'px';"
        "o.textContent='at '+x+' after '+moves+' moves';});addEventListener("
        "'mouseup',function(){if(down)o.textContent+=', released';"
        "down=false;});</script></body></html>",
        NULL},
    /* /keys: a field with text, a paragraph of two words to select
     * between, a button and a link; a log of the keys, clicks (with the
     * selection after each), context menus and other buttons' clicks. */
    {"/keys",
        "<!doctype html><html><head><title>Keys</title></head><body>"
        "<input id=\"f\" aria-label=\"Field\" value=\"hello world\">"
        "<p id=\"para\">The first sentence of a paragraph. <span id=\"a\">"
        "Alpha</span> then <span id=\"b\">Omega</span> end.</p>"
        "<button id=\"btn\">Menu</button> <a id=\"lnk\" href=\"/next\">"
        "Next page</a><p id=\"log\"></p><script>const log=document."
        "getElementById('log'),f=document.getElementById('f'),b=document."
        "getElementById('btn');function say(t){log.textContent+=' '+t;}"
        "f.addEventListener('keydown',function(e){say('keydown:'+e.key+"
        "' code='+e.code);});f.addEventListener('keyup',function(e){say("
        "'keyup:'+e.key+(e.ctrlKey?'+ctrl':'')+' sel='+f.selectionStart+"
        "'-'+f.selectionEnd);});f.addEventListener('input',function(){say("
        "'input='+f.value);});document.addEventListener('click',function(e){"
        "if(e.target===log)return;say('click:'+e.target.id+' detail='+"
        "e.detail+(e.shiftKey?' shift':'')+' sel='+JSON.stringify(String("
        "getSelection())));});b.addEventListener('contextmenu',function(e){"
        "e.preventDefault();say('contextmenu:btn');});document."
        "addEventListener('auxclick',function(e){say('auxclick:'+e.target."
        "id+' button='+e.button);});</script></body></html>",
        NULL},
    /* A confirm and a prompt behind buttons: the page writes what each
     * returned into #out. */
    {"/confirm",
        "<!doctype html><html><head><title>Drafts</title></head><body>"
        "<button id=\"del\" onclick=\"document.getElementById('out')"
        ".textContent='confirm='+confirm('Delete the draft?')\">Delete"
        "</button><button id=\"ask\" onclick=\"document.getElementById("
        "'out').textContent='prompt='+prompt('Your name?','Ada')\">Name"
        "</button><p id=\"out\">none</p></body></html>",
        NULL},
    /* Frames: a page with a frame of the same origin (/inner, a button
     * that says so when pressed and a link away), one with the same
     * frame from "localhost", another site (out of process), and one
     * whose "localhost" frame asks "sub.localhost" (a name Chromium
     * takes for loopback) for /tracker, then tells the top page, which
     * shows it in its title. */
    {"/framed",
        "<!doctype html><html><head><title>Framed</title></head><body>"
        "<h1>Framed</h1><iframe src=\"/inner\" title=\"Inner\"></iframe>"
        "</body></html>",
        NULL},
    {"/inner",
        "<!doctype html><html><head><title>Inner</title></head><body>"
        "<h2>Inside</h2><button onclick=\"this.textContent='Pressed'\">"
        "Press me</button> <a href=\"/next\">Leave frame</a>"
        "<div id=\"lone\">Only a listener</div><script>const l=document."
        "getElementById('lone');l.addEventListener('click',function(){"
        "l.textContent='Heard';});</script></body></html>",
        NULL},
    {"/oopif",
        "<!doctype html><html><head><title>Other site</title></head><body>"
        "<h1>Other site</h1><iframe src=\"http://localhost:%d/inner\" "
        "title=\"Elsewhere\"></iframe></body></html>",
        NULL},
    {"/leaky",
        "<!doctype html><html><head><title>Leaky</title></head><body>"
        "<iframe src=\"http://localhost:%d/leak\"></iframe><script>"
        "addEventListener('message',function(){document.title='Done';});"
        "</script></body></html>",
        NULL},
    {"/leak",
        "<!doctype html><html><head><title>Leak</title></head><body>"
        "<img alt=\"t\" src=\"http://sub.localhost:%d/tracker\" "
        "onload=\"parent.postMessage(1,'*')\" "
        "onerror=\"parent.postMessage(1,'*')\"></body></html>",
        NULL},
    {"/tracker", "not a picture", NULL},
    /* Tabs: a page that opens /leaks in a new tab (a link) and a
     * window straight at "sub.localhost" (Chromium takes the name for
     * loopback); /leaks asks "sub.localhost" for /tracker as it parses,
     * and has a button that titles it "Pressed". */
    {"/opens",
        "<!doctype html><html><head><title>Opens</title></head><body>"
        "<a id=\"tab\" href=\"/leaks\" target=\"_blank\">Leaky tab</a>"
        "<button id=\"win\" onclick=\"window.open('http://sub.localhost:"
        "%d/tracker')\">Away</button></body></html>",
        NULL},
    {"/leaks",
        "<!doctype html><html><head><title>Leaks</title></head><body>"
        "<img alt=\"t\" src=\"http://sub.localhost:%d/tracker\">"
        "<button onclick=\"document.title='Pressed'\">Press</button>"
        "</body></html>",
        NULL},
    /* ?n=N frames of /inner. */
    {"/frames", NULL, NULL},
    /* The sign-in form (/login) in a frame from 127.0.0.1:N, the port of
     * another page server: same site, another origin. */
    {"/xlogin", NULL, NULL},
};

#define SITE_PAGES (sizeof(site) / sizeof(site[0]))

/* The pages made by code, for the request's ?n= (0 when there is none;
 * at most PAGES_N_MAX): malloc'd, or NULL when memory is short. */
static const struct {
	const char *path;
	char *(*render)(long n);
} made_pages[] = {
    {"/links", pages_links},
    {"/nodes", pages_nodes},
    {"/quiet", pages_quiet},
    {"/frames", pages_frames},
    {"/xlogin", pages_xlogin},
};

#define PAGES_HELD_MAX 16 /* /hang connections held open at once */

struct tk_pages {
	int fd;
	int port;
	int stop[2];
	pthread_t thread;
	atomic_int hits[SITE_PAGES];
	int held[PAGES_HELD_MAX]; /* /hang: never answered, closed at stop */
	int n_held;
	atomic_bool gate; /* /gate answers "open" */
	/* The last upload POST /upload took (pages_files). */
	pthread_mutex_t up_lock;
	char *up;
	size_t up_len;
	char up_name[256];
	char up_names[512]; /* every file part's, comma-separated */
	int up_count;
};

/* Copies tmpl into out with its one "%d", if any, made the port, and its
 * one "%s", if any, made sub. */
static void
pages_fill(char *out, size_t len, const char *tmpl, int port, const char *sub)
{
	const char *at = strstr(tmpl, "%d");
	const char *as = strstr(tmpl, "%s");

	if (at != NULL)
		snprintf(
		    out, len, "%.*s%d%s", (int)(at - tmpl), tmpl, port, at + 2);
	else if (as != NULL)
		snprintf(
		    out, len, "%.*s%s%s", (int)(as - tmpl), tmpl, sub, as + 2);
	else
		snprintf(out, len, "%s", tmpl);
}

/*
 * The Cookie header of the request head req into out, with only the
 * characters a test's cookies use (letters, digits, '=', ';' and ' '), or
 * "none".
 */
static void
pages_cookies(const char *req, char *out, size_t len)
{
	const char *h = strcasestr(req, "\r\ncookie:");
	size_t n = 0;

	if (h != NULL)
		for (h += 9; *h != '\0' && *h != '\r' && n + 1 < len; h++)
			if (isalnum((unsigned char)*h) || *h == '=' ||
			    *h == ';' || (*h == ' ' && n > 0))
				out[n++] = *h;
	out[n] = '\0';
	if (n == 0)
		snprintf(out, len, "none");
}

/* The cookie a ?set=NAME asks for, as a Set-Cookie line, or "". */
static void
pages_set_cookie(const char *query, char *out, size_t len)
{
	const char *v = query != NULL ? strstr(query, "set=") : NULL;
	size_t n = v != NULL
	               ? strspn(v + 4, "abcdefghijklmnopqrstuvwxyz0123456789")
	               : 0;

	out[0] = '\0';
	if (n > 0 && n < 32)
		snprintf(
		    out, len, "Set-Cookie: %.*s=1; Path=/\r\n", (int)n, v + 4);
}

/*
 * A page of units: titled title, with a heading "<n> <title in lower
 * case>", then open, unit(f, i) for i = 1, 2... while i * per <= n, and
 * close; malloc'd, or NULL when memory is short.
 */
static char *
pages_repeat(const char *title, long n, const char *open, long per,
    bool (*unit)(FILE *f, long i), const char *close)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok;

	if (f == NULL)
		return NULL;
	ok = fprintf(f,
	         "<!doctype html><html><head><title>%s</title></head><body>"
	         "<h1>%ld %c%s</h1>%s",
	         title, n, tolower((unsigned char)title[0]), title + 1,
	         open) > 0;
	for (long i = 1; ok && i * per <= n; i++)
		ok = unit(f, i);
	ok = fprintf(f, "%s</body></html>", close) > 0 && ok;
	if (fclose(f) != 0 || !ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool
pages_link(FILE *f, long i)
{
	return fprintf(f, "<li><a href=\"/next?i=%ld\">Link %ld</a></li>", i,
	           i) > 0;
}

static char *
pages_links(long n)
{
	return pages_repeat("Links", n, "<ul>", 1, pages_link, "</ul>");
}

/* Ten elements: div, h2, p, b, a, ul, li, li, button, input. */
static bool
pages_section(FILE *f, long i)
{
	return fprintf(f,
	           "<div><h2>Section %ld</h2><p>Text of section %ld, "
	           "<b>bold</b>, and <a href=\"/next?s=%ld\">link %ld</a>."
	           "</p><ul><li>Item %ld</li><li><button>Do %ld</button>"
	           "</li></ul><input aria-label=\"Field %ld\"></div>",
	           i, i, i, i, i, i, i) > 0;
}

static char *
pages_nodes(long n)
{
	return pages_repeat("Nodes", n, "", 10, pages_section, "");
}

static bool
pages_hush(FILE *f, long i)
{
	(void)i;
	return fputs("<div><span></span></div>", f) >= 0;
}

static char *
pages_quiet(long n)
{
	return pages_repeat(
	    "Quiet", n, "", 2, pages_hush, "<a href=\"/next?i=0\">End</a>");
}

static bool
pages_frame(FILE *f, long i)
{
	return fprintf(f,
	           "<iframe src=\"/inner\" title=\"Frame %ld\"></iframe>",
	           i) > 0;
}

static char *
pages_frames(long n)
{
	return pages_repeat("Frames", n, "", 1, pages_frame, "");
}

static char *
pages_xlogin(long n)
{
	char *b = malloc(512);

	if (b != NULL)
		snprintf(b, 512,
		    "<!doctype html><html><head><title>Framed sign-in</title>"
		    "</head><body><h1>Shop</h1><iframe "
		    "src=\"http://127.0.0.1:%ld/login\" title=\"Sign-in\">"
		    "</iframe></body></html>",
		    n);
	return b;
}

/* The ?n= of query (NULL: none), 0 when there is none, at most
 * PAGES_N_MAX. */
static long
pages_n(const char *query)
{
	const char *v = query != NULL ? strstr(query, "n=") : NULL;
	char *end;
	long n;

	if (v == NULL)
		return 0;
	n = strtol(v + 2, &end, 10);
	if (end == v + 2 || n < 0)
		return 0;
	return n > PAGES_N_MAX ? PAGES_N_MAX : n;
}

/* Sends all of len bytes of b; false when the peer went away. */
static bool
pages_send(int c, const char *b, size_t len)
{
	while (len > 0) {
		ssize_t n = send(c, b, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * Files: GET /bigfile, an attachment of PAGES_BIG_BYTES, more than a task's
 * artifact may hold; GET /upload, a form of two file inputs (#one, and
 * #many that takes several) and a text field (#text), sent as
 * multipart/form-data to POST /upload, whose first file part (at most
 * PAGES_UPLOAD_MAX bytes) is kept for tk_pages_last_upload and answered
 * with a page titled "Uploaded".  req holds the len bytes read so far.
 * Returns true when it served the request.
 */
#define PAGES_BIG_BYTES (5 * 1024 * 1024)
#define PAGES_UPLOAD_MAX (1024 * 1024)

static const char pages_upload_form[] =
    "<!doctype html><html><head><title>Upload</title></head><body>"
    "<form method=\"post\" action=\"/upload\" "
    "enctype=\"multipart/form-data\">"
    "<input type=\"file\" id=\"one\" name=\"one\" aria-label=\"One\">"
    "<input type=\"file\" id=\"many\" name=\"many\" multiple "
    "aria-label=\"Many\"><input id=\"text\" name=\"text\" "
    "aria-label=\"Text\"><button id=\"send\" type=\"submit\">Send"
    "</button></form><p id=\"log\"></p><script>"
    "for(const i of document.querySelectorAll('input[type=file]'))"
    "for(const t of ['input','change'])i.addEventListener(t,()=>"
    "{document.getElementById('log').textContent+=i.id+':'+t+' ';});"
    "</script></body></html>";

/* The file parts of a multipart body (the boundary from head's
 * Content-Type) that carry a file (a named one: an input left empty sends
 * a part with filename ""): the first one's bytes and name into s's kept
 * upload, every one's name into its list. */
static void
pages_keep_upload(
    struct tk_pages *s, const char *head, const char *body, size_t n)
{
	const char *b = strstr(head, "boundary=");
	char delim[128];
	const char *at = body, *part, *fn, *data, *end;
	size_t dl, used = 0;
	bool first = true;

	if (b == NULL)
		return;
	b += 9;
	dl = strcspn(b, "\r\n;");
	if (dl == 0 || dl + 5 > sizeof(delim))
		return;
	snprintf(delim, sizeof(delim), "\r\n--%.*s", (int)dl, b);
	dl += 4;
	pthread_mutex_lock(&s->up_lock);
	s->up_names[0] = '\0';
	while ((part = memmem(
	            at, n - (size_t)(at - body), "filename=\"", 10)) != NULL) {
		fn = part + 10;
		data = memmem(part, n - (size_t)(part - body), "\r\n\r\n", 4);
		if (data == NULL)
			break;
		data += 4;
		end = memmem(data, n - (size_t)(data - body), delim, dl);
		if (end == NULL)
			break;
		at = end;
		if (*fn == '"')
			continue; /* no file */
		if (used < sizeof(s->up_names))
			used += (size_t)snprintf(s->up_names + used,
			    sizeof(s->up_names) - used, "%s%.*s",
			    used > 0 ? "," : "", (int)strcspn(fn, "\""), fn);
		if (!first)
			continue;
		first = false;
		free(s->up);
		s->up_len = (size_t)(end - data);
		if ((s->up = malloc(s->up_len + 1)) != NULL) {
			memcpy(s->up, data, s->up_len);
			s->up[s->up_len] = '\0';
		}
		snprintf(s->up_name, sizeof(s->up_name), "%.*s",
		    (int)strcspn(fn, "\""), fn);
	}
	s->up_count++;
	pthread_mutex_unlock(&s->up_lock);
}

static bool
pages_files(struct tk_pages *s, int c, const char *req, size_t len)
{
	const char *hend = strstr(req, "\r\n\r\n"), *cl;
	char head[256], *body;
	size_t got, want;
	long v;
	int n;

	if (strncmp(req, "GET /bigfile ", 13) == 0) {
		char chunk[65536];

		memset(chunk, 'x', sizeof(chunk));
		n = snprintf(head, sizeof(head),
		    "HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\n"
		    "Content-Length: %d\r\nContent-Disposition: attachment; "
		    "filename=\"big.zip\"\r\nConnection: close\r\n\r\n",
		    PAGES_BIG_BYTES);
		if (!pages_send(c, head, (size_t)n))
			return true;
		for (int i = 0; i < PAGES_BIG_BYTES / (int)sizeof(chunk); i++)
			if (!pages_send(c, chunk, sizeof(chunk)))
				break;
		return true;
	}
	if (strncmp(req, "GET /upload ", 12) == 0 ||
	    strncmp(req, "GET /upload?", 12) == 0) {
		n = snprintf(head, sizeof(head),
		    "HTTP/1.1 200 OK\r\nContent-Type: text/html; "
		    "charset=utf-8\r\nContent-Length: %zu\r\n"
		    "Connection: close\r\n\r\n",
		    strlen(pages_upload_form));
		if (pages_send(c, head, (size_t)n))
			(void)pages_send(
			    c, pages_upload_form, strlen(pages_upload_form));
		return true;
	}
	if (strncmp(req, "POST /upload ", 13) != 0 || hend == NULL)
		return false;
	cl = strcasestr(req, "\r\nContent-Length:");
	v = cl != NULL ? strtol(cl + 17, NULL, 10) : -1;
	if (v <= 0 || v > PAGES_UPLOAD_MAX)
		return true; /* refused: closed unanswered */
	want = (size_t)v;
	if ((body = malloc(want)) == NULL)
		return true;
	got = len - (size_t)(hend + 4 - req);
	if (got > want)
		got = want;
	memcpy(body, hend + 4, got);
	while (got < want) {
		struct pollfd p = {.fd = c, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 5000) <= 0 ||
		    (r = read(c, body + got, want - got)) <= 0)
			break;
		got += (size_t)r;
	}
	if (got == want)
		pages_keep_upload(s, req, body, want);
	free(body);
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	    strlen("<!doctype html><title>Uploaded</title>"));
	if (pages_send(c, head, (size_t)n))
		(void)pages_send(c, "<!doctype html><title>Uploaded</title>",
		    strlen("<!doctype html><title>Uploaded</title>"));
	return true;
}

/* Serves one request on c; returns true when c is to be held open
 * unanswered (/hang), false when it is done with. */
static bool
pages_serve(struct tk_pages *s, int c)
{
	char req[4096], head[640], path[1024], where[256], text[2048];
	char jar[256], set[64], *made = NULL;
	size_t len = 0;
	const char *body = NULL, *location = NULL, *page;
	long count;
	int status = 404;
	ssize_t n;

	/* The request head; a browser sends it in one piece. */
	while (len < sizeof(req) - 1) {
		struct pollfd p = {.fd = c, .events = POLLIN};

		if (poll(&p, 1, 5000) <= 0 ||
		    (n = read(c, req + len, sizeof(req) - 1 - len)) <= 0)
			return false;
		len += (size_t)n;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	if (pages_files(s, c, req, len))
		return false;
	if (sscanf(req, "GET %1023s ", path) != 1)
		return false;
	pages_set_cookie(strchr(path, '?'), set, sizeof(set));
	pages_cookies(req, jar, sizeof(jar));
	count = pages_n(strchr(path, '?'));
	path[strcspn(path, "?")] = '\0';
	for (size_t i = 0; i < SITE_PAGES; i++)
		if (strcmp(site[i].path, path) == 0) {
			body = site[i].body;
			location = site[i].location;
			status = 200;
			atomic_fetch_add(&s->hits[i], 1);
		}
	for (size_t i = 0; i < sizeof(made_pages) / sizeof(made_pages[0]); i++)
		if (strcmp(made_pages[i].path, path) == 0 &&
		    (made = made_pages[i].render(count)) == NULL)
			return false;
	if (strcmp(path, "/hang") == 0 && s->n_held < PAGES_HELD_MAX) {
		s->held[s->n_held++] = c;
		return true;
	}
	if (strcmp(path, "/gate") == 0 && atomic_load(&s->gate))
		body = "open";
	if (body == NULL)
		body = "<!doctype html><title>Not found</title>";
	if (location != NULL) {
		status = 302;
		pages_fill(where, sizeof(where), location, s->port, "");
	}
	if (made == NULL)
		pages_fill(text, sizeof(text), body, s->port, jar);
	page = made != NULL ? made : text;
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\n%s%s%s%s%sConnection: close\r\n\r\n",
	    status,
	    status == 200   ? "OK"
	    : status == 302 ? "Found"
	                    : "Not Found",
	    strcmp(path, "/file") == 0 ? "text/plain"
	                               : "text/html; charset=utf-8",
	    strlen(page), location ? "Location: " : "", location ? where : "",
	    location ? "\r\n" : "", status == 200 ? set : "",
	    strcmp(path, "/file") == 0
	        ? "Content-Disposition: attachment; filename=\"report.txt\"\r\n"
	        : "");
	if (pages_send(c, head, (size_t)n))
		(void)pages_send(c, page, strlen(page));
	free(made);
	return false;
}

static void *
pages_run(void *arg)
{
	struct tk_pages *s = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN},
		    {.fd = s->stop[0], .events = POLLIN}};
		int c;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			return NULL;
		if ((c = accept(s->fd, NULL, NULL)) < 0)
			continue;
		if (!pages_serve(s, c))
			close(c);
	}
}

struct tk_pages *
tk_pages_start(int *port)
{
	struct tk_pages *s = calloc(1, sizeof(*s));
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int one = 1;

	if (s == NULL)
		return NULL;
	pthread_mutex_init(&s->up_lock, NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) !=
	        0 ||
	    bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(s->fd, 64) != 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &alen) != 0 ||
	    (s->port = ntohs(a.sin_port)) == 0 || pipe(s->stop) != 0 ||
	    pthread_create(&s->thread, NULL, pages_run, s) != 0) {
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return NULL;
	}
	*port = s->port;
	return s;
}

void
tk_pages_stop(struct tk_pages *s)
{
	if (s == NULL)
		return;
	(void)!write(s->stop[1], "x", 1);
	pthread_join(s->thread, NULL);
	for (int i = 0; i < s->n_held; i++)
		close(s->held[i]);
	close(s->fd);
	close(s->stop[0]);
	close(s->stop[1]);
	pthread_mutex_destroy(&s->up_lock);
	free(s->up);
	free(s);
}

int
tk_pages_hits(struct tk_pages *s, const char *path)
{
	for (size_t i = 0; i < SITE_PAGES; i++)
		if (strcmp(site[i].path, path) == 0)
			return atomic_load(&s->hits[i]);
	return -1;
}

void
tk_pages_open_gate(struct tk_pages *s)
{
	atomic_store(&s->gate, true);
}

int
tk_pages_last_upload(
    struct tk_pages *s, char **bytes, size_t *len, char *name, size_t nlen)
{
	int count;

	pthread_mutex_lock(&s->up_lock);
	count = s->up_count;
	*bytes = NULL;
	*len = 0;
	if (name != NULL && nlen > 0)
		snprintf(name, nlen, "%s", s->up_name);
	if (s->up != NULL && (*bytes = malloc(s->up_len + 1)) != NULL) {
		memcpy(*bytes, s->up, s->up_len + 1);
		*len = s->up_len;
	}
	pthread_mutex_unlock(&s->up_lock);
	return count;
}

void
tk_pages_upload_names(struct tk_pages *s, char *names, size_t len)
{
	pthread_mutex_lock(&s->up_lock);
	snprintf(names, len, "%s", s->up_names);
	pthread_mutex_unlock(&s->up_lock);
}
