/*
 * snapshot_js.h: the scripts of the snapshot (page_snapshot.c), constants
 * of the binary.  They run in the snapshot's isolated world, which the
 * page's own scripts cannot reach: nothing the page defines (a
 * replaced Array.prototype.push, a getter on Element) changes what they
 * do or see.  Input reaches them only as JSON arguments.
 *
 * ACT_SNAPSHOT_JS(o) walks the document in order and returns the
 * outline's nodes as the accessibility tree would give them, in
 * outline.h's shape: {nodeId, role: {value}, name: {value}, childIds},
 * with states (the live state of a control: checked, disabled, focused...)
 * and value (what a field holds; a password's only as dots) where they
 * apply, and backendDOMNodeId and ref on the nodes that get a ref.  A ref
 * is the element's place in the world's list, globalThis.spacedRefs
 * (plus one): an element keeps its ref in every snapshot of the document,
 * so the refs of one page of a long outline stay good while the next is
 * read.  The list starts over (fresh) with a new world, or when one more
 * snapshot could take it past o.kept.
 *
 * Every element a person could act on gets a ref: the roles of o.acting,
 * and an element clickable with another role or none (a pointer cursor
 * its parent does not have, a tabindex of 0 or more, an onclick
 * attribute, a listener of a press or a click that page_listeners.c
 * found, as globalThis.spacedListened: the world cannot see the page's
 * listeners, the browser can), printed as "clickable" when it has none.
 *
 * o carries the bounds: max (bytes of outline), acting (the roles that
 * get a ref), refs (new per snapshot), kept, depth (printed levels),
 * nest (levels of the document), name (bytes of a name or value),
 * nameWalk (nodes one name is gathered from), nodes (nodes returned) and
 * walk (nodes visited); and where to read: root (the list place of the
 * element whose subtree is read; -1: the body) and offset (the place, in
 * the body's elements in document order, of the element to start at;
 * its ancestors are shown as the path to it, what comes before it is
 * not).  It returns {nodes, cut, walked, total, next, kept, fresh,
 * past}, or {gone} when root names no element of the document: past is
 * true when offset names no element (of root), and nothing was read
 * then; cut is "" when the whole document was read,
 * else why the walk stopped ("size": the next line would pass max;
 * "nodes", "refs", "walk"; "error": an element it could not read);
 * walked and total count the elements of the body it visited and that
 * it has; next is the offset to continue at (-1: none), the element the
 * cut line would have shown, or for a text the element before it.
 *
 * Each line's bytes are counted as outline.c will write them (its
 * indentation, role, quoted and cut name, ref tag), an upper bound, so
 * the walk stops where the outline would be cut and the reply is
 * bounded by max and nodes whatever the page (limits.h).  Cost: one
 * visit and one computed style per node read, O(the outline), not
 * O(the page), plus one count of the body's elements and, with an
 * offset or a cut, one search of them; the elements before an offset
 * cost a set lookup each, without a style.
 */
#ifndef ACT_SNAPSHOT_JS_H
#define ACT_SNAPSHOT_JS_H

/* One literal longer than the 4095 bytes C99 asks every compiler to
 * take; gcc and clang take any length, and -Wpedantic says so. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverlength-strings"
static const char ACT_SNAPSHOT_JS[] =
    "function(o){\n"
    "'use strict';\n"
    "const doc=document,acting=new Set(o.acting),out=[],G=globalThis;\n"
    "let used=0,walked=0,elems=0,stop='',at=null,nref=0,fresh=false;\n"
    /* The element of root, looked up before the list may start over. */
    "const scope=o.root>=0?(Array.isArray(G.spacedRefs)&&\n"
    "G.spacedRefs[o.root])||null:doc.body;\n"
    "if(o.root>=0&&!(scope&&scope.isConnected))return {gone:true};\n"
    "if(!Array.isArray(G.spacedRefs)||\n"
    "G.spacedRefs.length+o.refs>o.kept){\n"
    "G.spacedRefs=[];G.spacedRefOf=new WeakMap();fresh=true;}\n"
    "const els=G.spacedRefs,refOf=G.spacedRefOf;\n"
    "const all=doc.body?doc.body.getElementsByTagName('*'):[];\n"
    /* The focused element, inside open shadow roots too. */
    "let focus=doc.activeElement;\n"
    "while(focus&&focus.shadowRoot&&focus.shadowRoot.activeElement)\n"
    "focus=focus.shadowRoot.activeElement;\n"
    "if(focus===doc.body||focus===doc.documentElement)focus=null;\n"
    /* Not content: their subtree is never read. */
    "const SKIP=new Set(['script','style','template','noscript','head',\n"
    "'title','meta','link','base']);\n"
    /* Elements whose children print nothing of their own (a field's
     * text, a frame's document, media controls). */
    "const LEAF=new Set(['input','textarea','img','iframe','frame',\n"
    "'video','audio','canvas','svg','progress','meter','object',\n"
    "'embed','hr']);\n"
    /* The roles named from their content (WAI-ARIA's name from
     * content, and Chromium's term and summary). */
    "const CONTENT=new Set(['button','cell','checkbox','columnheader',\n"
    "'gridcell','heading','link','menuitem','menuitemcheckbox',\n"
    "'menuitemradio','option','radio','rowheader','switch','tab',\n"
    "'tooltip','treeitem','term','DisclosureTriangle','clickable']);\n"
    "const TEXTISH=new Set(['text','search','email','url','tel',\n"
    "'password','number','']);\n"
    /* Inputs whose value is no text of theirs (a password's is a
     * secret: it never leaves the page). */
    "const NOVAL=new Set(['checkbox','radio','file','hidden','password',\n"
    "'button','submit','reset','image']);\n"
    /* The roles that are checked, and those that are valued. */
    "const CHECKS=new Set(['checkbox','radio','switch','menuitemcheckbox',\n"
    "'menuitemradio']);\n"
    "const VALUED=new Set(['slider','spinbutton','scrollbar','progressbar',\n"
    "'meter']);\n"
    /* The ARIA roles an author may set; an unknown one is skipped for
     * the next word of the attribute, then the element's own. */
    "const ARIA=new Set(['alert','alertdialog','application','article',\n"
    "'banner','blockquote','button','caption','cell','checkbox','code',\n"
    "'columnheader','combobox','complementary','contentinfo',\n"
    "'definition','deletion','dialog','directory','document',\n"
    "'emphasis','feed','figure','form','grid','gridcell','group',\n"
    "'heading','insertion','link','list','listbox','listitem','log',\n"
    "'main','mark','marquee','math','meter','menu','menubar',\n"
    "'menuitem','menuitemcheckbox','menuitemradio','navigation','note',\n"
    "'option','paragraph','progressbar','radio','radiogroup','region',\n"
    "'row','rowgroup','rowheader','scrollbar','search','searchbox',\n"
    "'separator','slider','spinbutton','status','strong','subscript',\n"
    "'superscript','switch','tab','table','tablist','tabpanel','term',\n"
    "'textbox','time','timer','toolbar','tooltip','tree','treegrid',\n"
    "'treeitem']);\n"
    /* The roles of elements, in Chromium's words (its accessibility
     * tree's: image, LabelText, DisclosureTriangle...).  Text-level
     * elements (b, em, code, span...) have none: their text joins the
     * text around them. */
    "const INPUT={checkbox:'checkbox',radio:'radio',number:'spinbutton',\n"
    "range:'slider',button:'button',submit:'button',reset:'button',\n"
    "image:'button',file:'button',search:'searchbox',date:'Date',\n"
    "'datetime-local':'DateTime',month:'DateTime',week:'DateTime',\n"
    "time:'InputTime',color:'ColorWell'};\n"
    "const TAG={article:'article',aside:'complementary',\n"
    "blockquote:'blockquote',button:'button',caption:'caption',\n"
    "dd:'definition',details:'group',dialog:'dialog',\n"
    "dl:'DescriptionList',dt:'term',fieldset:'group',figure:'figure',\n"
    "figcaption:'Figcaption',h1:'heading',h2:'heading',h3:'heading',\n"
    "h4:'heading',h5:'heading',h6:'heading',hr:'separator',img:'image',\n"
    "label:'LabelText',legend:'Legend',li:'listitem',main:'main',\n"
    "menu:'list',meter:'meter',nav:'navigation',ol:'list',ul:'list',\n"
    "optgroup:'group',option:'option',output:'status',p:'paragraph',\n"
    "progress:'progressbar',search:'search',\n"
    "summary:'DisclosureTriangle',table:'table',tr:'row',\n"
    "textarea:'textbox',address:'group',iframe:'Iframe',frame:'Iframe',\n"
    "video:'Video',audio:'Audio',canvas:'Canvas',svg:'image',\n"
    "form:'form'};\n"
    /* Whitespace runs are one space; NUL is a space too (it would end
     * the name in C).  A lone surrogate becomes U+FFFD, so the reply is
     * JSON that any parser takes. */
    "const clean=s=>s.replace(/[\\s\\u0000]+/g,' ').trim();\n"
    "const wf=s=>s.toWellFormed?s.toWellFormed():s;\n"
    /* The children as rendered: an open shadow root's instead of the
     * host's, a slot's assigned nodes. */
    "const kids=e=>{if(e.shadowRoot)return e.shadowRoot.childNodes;\n"
    "if(e.localName==='slot'){const a=e.assignedNodes();\n"
    "if(a.length)return a;}return e.childNodes;};\n"
    "const SECTIONS='article,aside,main,nav,section,[role=article],'+\n"
    "'[role=complementary],[role=main],[role=navigation],[role=region]';\n"
    "const sectioned=e=>!!(e.parentElement&&\n"
    "e.parentElement.closest(SECTIONS));\n"
    "function implicit(e,t){\n"
    "if(t==='a'||t==='area')return e.hasAttribute('href')?'link':'';\n"
    "if(t==='input'){const y=e.type;if(y==='hidden')return '';\n"
    "if(y in INPUT)return INPUT[y];return e.list?'combobox':'textbox';}\n"
    "if(t==='select')return e.multiple||e.size>1?'listbox':'combobox';\n"
    "if(t==='section')return e.hasAttribute('aria-label')||\n"
    "e.hasAttribute('aria-labelledby')?'region':'';\n"
    "if(t==='header')return sectioned(e)?'':'banner';\n"
    "if(t==='footer')return sectioned(e)?'':'contentinfo';\n"
    "if(t==='td')return e.closest('[role=grid],[role=treegrid]')?\n"
    "'gridcell':'cell';\n"
    "if(t==='th'){const s=e.getAttribute('scope');\n"
    "return s==='row'||s==='rowgroup'?'rowheader':'columnheader';}\n"
    "if(t==='img'&&e.getAttribute('alt')===''&&!e.getAttribute('title'))\n"
    "return '';\n"
    "return Object.prototype.hasOwnProperty.call(TAG,t)?TAG[t]:'';}\n"
    "function roleOf(e,t){\n"
    "const r=e.getAttribute('role');\n"
    "if(r)for(const w of r.trim().split(/\\s+/)){\n"
    "if(w==='img')return 'image';\n"
    "if(w==='none'||w==='presentation'||w==='generic')return '';\n"
    "if(ARIA.has(w))return w;}\n"
    "return implicit(e,t);}\n"
    /* The editing host of a contenteditable region: a textbox. */
    "const editHost=e=>e.isContentEditable&&!(e.parentElement&&\n"
    "e.parentElement.isContentEditable);\n"
    /* Clickable as a person sees it: a pointer its parent does not
     * have (inherited, it is the parent that is clickable), a place in
     * the tab order, an onclick attribute, a listener of a press or a
     * click (page_listeners.c hands those over). */
    "const clickable=(e,st,pc)=>st.cursor==='pointer'&&pc!=='pointer'||\n"
    "e.hasAttribute('onclick')||e.hasAttribute('tabindex')&&e.tabIndex>=0||\n"
    "G.spacedListened instanceof WeakSet&&G.spacedListened.has(e);\n"
    /* The live state of e and its value, {s: [words], v}: the DOM's
     * properties where the element has them (checked, indeterminate,
     * selected, disabled, value), else its ARIA attributes. */
    "function stateOf(e,t,role,edit){\n"
    "const s=[],a=k=>e.getAttribute(k);let v='',c=null,x=a('aria-expanded');\n"
    "if(CHECKS.has(role)){\n"
    "if(t==='input'&&(e.type==='checkbox'||e.type==='radio'))\n"
    "c=e.type==='checkbox'&&e.indeterminate?'mixed':String(e.checked);\n"
    "else c=a('aria-checked');\n"
    "if(c==='true')s.push('checked');else if(c==='mixed')\n"
    "s.push('checked=mixed');}\n"
    "c=a('aria-pressed');\n"
    "if(c==='true')s.push('pressed');else if(c==='mixed')\n"
    "s.push('pressed=mixed');\n"
    "if(t==='option'?e.selected:a('aria-selected')==='true')\n"
    "s.push('selected');\n"
    "if(t==='summary'&&e.parentElement&&\n"
    "e.parentElement.localName==='details')x=String(e.parentElement.open);\n"
    "if(x==='true')s.push('expanded');else if(x==='false')\n"
    "s.push('collapsed');\n"
    "if(e.matches(':disabled')||a('aria-disabled')==='true')\n"
    "s.push('disabled');\n"
    "if(e.required||a('aria-required')==='true')s.push('required');\n"
    "if(e===focus)s.push('focused');\n"
    "if(t==='input'){if(e.type==='password')v=e.value?'\u2022\u2022\u2022':'';"
    "\n"
    "else if(!NOVAL.has(e.type))v=e.value;}\n"
    "else if(t==='textarea')v=e.value;\n"
    "else if(t==='select'){if(role==='combobox'){\n"
    "const p=e.selectedOptions[0];v=p?p.label||p.text:'';}}\n"
    "else if(edit)v=textOf(e,null);\n"
    "else if(VALUED.has(role))v=a('aria-valuetext')||a('aria-valuenow')||'';\n"
    "return {s,v:clean(v)};}\n"
    /* The text of r's subtree as a name takes it: what shows, an
     * image's alt, a field's value; blocks apart.  Bounded by bytes and
     * by nodes visited. */
    "function textOf(r,skip){\n"
    "let s='',n=0;\n"
    "const go=(x,d)=>{\n"
    "if(s.length>o.name*2||++n>o.nameWalk||d>o.nest)return;\n"
    "if(x.nodeType===3){s+=x.data;return;}\n"
    "if(x.nodeType!==1||x===skip)return;\n"
    "const t=x.localName;if(SKIP.has(t))return;\n"
    "let block=false;\n"
    "if(x!==r){\n"
    "if(x.getAttribute('aria-hidden')==='true')return;\n"
    "const st=getComputedStyle(x);if(st.display==='none')return;\n"
    "const al=x.getAttribute('aria-label');\n"
    "if(al&&al.trim()){s+=' '+al+' ';return;}\n"
    "if(t==='img'||t==='area'){s+=x.getAttribute('alt')||'';return;}\n"
    "if(t==='input'){s+=' '+(NOVAL.has(x.type)?'':x.value)+' ';return;}\n"
    "if(t==='textarea'){s+=' '+x.value+' ';return;}\n"
    "if(t==='select'){const p=x.selectedOptions[0];\n"
    "s+=' '+(p?p.text:'')+' ';return;}\n"
    "block=st.display!=='inline';}\n"
    "if(block)s+=' ';\n"
    "for(const k of kids(x))go(k,d+1);\n"
    "if(block)s+=' ';};\n"
    "go(r,0);return clean(s);}\n"
    "function labels(e){\n"
    "const l=e.labels,a=[];if(!l)return '';\n"
    "for(const x of l){const s=textOf(x,e);if(s)a.push(s);}\n"
    "return a.join(' ');}\n"
    /* The accessible name, in the order of the HTML and ARIA rules:
     * aria-labelledby, aria-label, the element's own (a button's value,
     * a field's labels, title or placeholder, an image's alt, a
     * fieldset's legend, a table's caption), its content for the roles
     * named so, then title. */
    "function nameOf(e,t,role){\n"
    "const lb=e.getAttribute('aria-labelledby');\n"
    "if(lb){const root=e.getRootNode(),a=[];\n"
    "for(const id of lb.trim().split(/\\s+/)){\n"
    "const x=root.getElementById?root.getElementById(id):null;\n"
    "if(x)a.push(textOf(x,null)||clean(x.textContent||''));}\n"
    "const s=clean(a.join(' '));if(s)return s;}\n"
    "const al=e.getAttribute('aria-label');\n"
    "if(al&&al.trim())return clean(al);\n"
    "const title=clean(e.getAttribute('title')||'');\n"
    "if(t==='input'){const y=e.type;\n"
    "if(y==='button'||y==='submit'||y==='reset')return clean(e.value)||\n"
    "(y==='submit'?'Submit':y==='reset'?'Reset':title);\n"
    "if(y==='image')return labels(e)||clean(e.alt)||title||'Submit';\n"
    "if(y==='file')return labels(e)||'Choose File';}\n"
    "if(t==='input'||t==='textarea'||t==='select'||t==='meter'||\n"
    "t==='progress'){const s=labels(e)||title;if(s)return s;\n"
    "return t==='textarea'||(t==='input'&&TEXTISH.has(e.type))?\n"
    "clean(e.placeholder||''):'';}\n"
    "if(t==='img'||t==='area')return clean(e.getAttribute('alt')||'')||\n"
    "title;\n"
    "if(t==='fieldset'||t==='table'){\n"
    "const w=t==='table'?'caption':'legend';\n"
    "for(const k of e.children)if(k.localName===w)return textOf(k,null);}\n"
    "if(t==='svg'){for(const k of e.children)\n"
    "if(k.localName==='title')return clean(k.textContent||'');}\n"
    "if(CONTENT.has(role)){const s=textOf(e,null);if(s)return s;}\n"
    "return title;}\n"
    /* The bytes outline.c writes for a name: UTF-8, '"' and '\'
     * escaped, cut at o.name bytes with a 3-byte marker, in quotes;
     * for a value (vlen), neither quotes nor escapes. */
    "function qlen(s){\n"
    "let b=0,esc=0,cut=false;\n"
    "for(const ch of s){const c=ch.codePointAt(0),\n"
    "w=c<128?1:c<2048?2:c<65536?3:4;\n"
    "if(b+w>o.name){cut=true;break;}\n"
    "b+=w;if(ch==='\"'||ch==='\\\\')esc++;}\n"
    "return b+esc+(cut?3:0)+2;}\n"
    "function vlen(s){\n"
    "let b=0;for(const ch of s){const c=ch.codePointAt(0),\n"
    "w=c<128?1:c<2048?2:c<65536?3:4;if(b+w>o.name)return b+3;b+=w;}\n"
    "return b;}\n"
    /* One node and its line's bytes; null, with stop set, when a bound
     * is reached (the root is always kept: with nothing else the
     * outline says what cut it).  A role is one of the words above,
     * shorter than any bound outline.c puts on a role. */
    "const cap=s=>wf(s.length>o.name?s.slice(0,o.name+1):s);\n"
    "function emit(parent,role,name,depth,el,must,sv,from,click){\n"
    "if(out.length>=o.nodes){stop='nodes';at=el||from;return null;}\n"
    "const text=role==='StaticText',\n"
    "ref=!text&&!!el&&(click||acting.has(role));\n"
    "if(ref&&nref>=o.refs){stop='refs';at=el;return null;}\n"
    "let i=ref?refOf.get(el):undefined;\n"
    "const num=ref?(i===undefined?els.length:i)+1:0,\n"
    "val=sv&&sv.v?cap(sv.v):'';\n"
    "name=cap(name);\n"
    "let c=2*depth+3;\n"
    "if(text)c+=5+qlen(name);\n"
    "else{c+=role.length;\n"
    "if(name||role==='RootWebArea')c+=1+qlen(name);\n"
    "if(sv)for(const w of sv.s)c+=3+w.length;\n"
    "if(ref)c+=9+String(num).length;\n"
    "if(val)c+=2+vlen(val);}\n"
    "if(used+c>o.max){stop='size';at=el||from;if(!must)return null;}\n"
    "used+=c;\n"
    "const n={nodeId:String(out.length),role:{value:role},\n"
    "name:{value:name},childIds:[]};\n"
    "if(sv&&sv.s.length)n.states=sv.s;\n"
    "if(val)n.value={value:val};\n"
    "if(ref){if(i===undefined){i=els.length;els.push(el);refOf.set(el,i);}\n"
    "n.backendDOMNodeId=i;n.ref=i+1;nref++;}\n"
    "out.push(n);if(parent)parent.childIds.push(n.nodeId);return n;}\n"
    /* The text gathered since the last line, as one text line, unless
     * it is the whole name of what holds it. */
    "function flush(c){\n"
    "if(!c.t)return;const s=clean(c.t);c.t='';\n"
    "if(s&&s!==c.pname)emit(c.node,'StaticText',s,c.depth,null,false,null,\n"
    "c.from,false);}\n"
    /* One node of the document under the outline's node c.node; pc is
     * its parent's cursor.  What has no role prints nothing: an inline
     * one's text runs on, a block ends the text before and after it.
     * Hidden (display: none, aria-hidden, a closed details' content)
     * is skipped; visibility: hidden prints nothing but what inside it
     * shows.  c.from is where the text gathered in c.t began. */
    "function visit1(x,c,nest,vis,pc){\n"
    "if(stop)return;\n"
    "if(++walked>o.walk){stop='walk';at=x;return;}\n"
    "if(x.nodeType===3){if(vis&&c.t.length<o.name*4){\n"
    "if(!c.t)c.from=x;c.t+=x.data;}return;}\n"
    "if(x.nodeType!==1||nest>o.nest)return;\n"
    "const e=x,t=e.localName;\n"
    "elems++;\n"
    "if(SKIP.has(t)||e.getAttribute('aria-hidden')==='true')return;\n"
    "const st=getComputedStyle(e);if(st.display==='none')return;\n"
    "const v=st.visibility==='visible';\n"
    "let role=v?roleOf(e,t):'',click=false;\n"
    "const edit=v&&(!role||role==='textbox')&&editHost(e);\n"
    "if(edit)role='textbox';\n"
    "else if(v&&!acting.has(role)&&clickable(e,st,pc)){click=true;\n"
    "if(!role)role='clickable';}\n"
    "const list=t==='details'&&!e.open?\n"
    "[...e.children].filter(k=>k.localName==='summary'):kids(e);\n"
    "if(!role){\n"
    "if(t==='br'){if(!c.t)c.from=e;c.t+=' ';return;}\n"
    "const inl=st.display==='inline'||st.display==='contents';\n"
    "if(!inl)flush(c);\n"
    "for(const k of list){visit(k,c,nest+1,v,st.cursor);if(stop)return;}\n"
    "if(!inl)flush(c);\n"
    "return;}\n"
    "flush(c);if(stop)return;\n"
    "const name=nameOf(e,t,role),\n"
    "n=emit(c.node,role,name,c.depth,e,false,stateOf(e,t,role,edit),\n"
    "null,click);\n"
    "if(!n||LEAF.has(t)||edit||c.depth+1>o.depth)return;\n"
    "const k={node:n,depth:c.depth+1,pname:name,t:'',from:null};\n"
    "for(const x of list){visit(x,k,nest+1,v,st.cursor);if(stop)return;}\n"
    "flush(k);}\n"
    /* With an offset, what comes before its element is skipped, but
     * for the path to it; once a node of the path is read, the walk is
     * past the element (it was in there, shown or hidden). */
    "let target=null,skipping=false;const path=new Set();\n"
    "function visit(x,c,nest,vis,pc){\n"
    "if(skipping){if(x===target)skipping=false;\n"
    "else if(!path.has(x))return;\n"
    "else{visit1(x,c,nest,vis,pc);skipping=false;return;}}\n"
    "visit1(x,c,nest,vis,pc);}\n"
    /* The offset of the first element a cut left out: node x's own
     * (of its shadow host, for what is in a shadow tree), or for a
     * text, of the element just before it in document order, whose
     * line may come again.  -1 when it is not past the offset. */
    "function offsetOf(x){\n"
    "while(x&&x.getRootNode()!==doc)x=x.getRootNode().host||null;\n"
    "if(x&&x.nodeType!==1){const w=doc.createTreeWalker(doc.body,1);\n"
    "w.currentNode=x;x=w.previousNode();}\n"
    "const i=x?Array.prototype.indexOf.call(all,x):-1;\n"
    "return i>o.offset?i:-1;}\n"
    /* An element the walk cannot read (a throw) ends it there, with the
     * outline so far: the rest of the page is not lost to one element. */
    /* An offset past the elements (of root) reads nothing but the
     * page's own line. */
    "let past=false;\n"
    "if(o.offset>0){target=all[o.offset]||null;skipping=true;\n"
    "let x=target;\n"
    "for(;x&&x!==scope;x=x.assignedSlot||x.parentNode||x.host)path.add(x);\n"
    "past=!target||!scope||x!==scope;}\n"
    "const root=emit(null,'RootWebArea',clean(doc.title||''),0,null,true,\n"
    "null,null,false);\n"
    "if(!stop&&scope&&!past){const "
    "c={node:root,depth:1,pname:null,t:'',from:null};\n"
    "try{if(scope===doc.body){const pc=getComputedStyle(scope).cursor;\n"
    "for(const k of kids(scope)){visit(k,c,1,true,pc);if(stop)break;}}\n"
    "else visit(scope,c,1,true,scope.parentElement?\n"
    "getComputedStyle(scope.parentElement).cursor:'auto');\n"
    "if(!stop)flush(c);}catch(err){stop='error';at=null;}}\n"
    "return {nodes:out,cut:stop,walked:elems,total:all.length,\n"
    "next:stop&&at?offsetOf(at):-1,kept:els.length,fresh,past};}\n";
#pragma GCC diagnostic pop

/*
 * ACT_SNAPSHOT_REF_JS(i): element i of the snapshots of this world's
 * document, or null, also when it has left the document.  A world
 * belongs to one document: after a navigation its list, and every ref
 * in it, is gone.
 */
static const char ACT_SNAPSHOT_REF_JS[] =
    "function(i){const a=globalThis.spacedRefs;"
    "const e=a&&Number.isInteger(i)&&a[i];"
    "return e&&e.isConnected?e:null;}";

#endif
