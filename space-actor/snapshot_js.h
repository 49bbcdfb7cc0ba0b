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
 * with backendDOMNodeId on the nodes that get a ref (its place in the
 * world's list of them, globalThis.spacedRefs, which the snapshot
 * replaces).  o carries the bounds: max (bytes of outline), acting (the
 * roles that get a ref), refs, depth (printed levels), nest (levels of
 * the document), name (bytes of a name), nameWalk (nodes one name is
 * gathered from), nodes (nodes returned) and walk (nodes visited).
 * It returns {nodes, cut, walked, total}: cut is "" when the whole
 * document was read, else why the walk stopped ("size": the next line
 * would pass max; "nodes", "refs", "walk"; "error": an element it could
 * not read); walked and total count the
 * elements of the body it visited and that it has.
 *
 * Each line's bytes are counted as outline.c will write them (its
 * indentation, role, quoted and cut name, ref tag), an upper bound, so
 * the walk stops where the outline would be cut and the reply is
 * bounded by max and nodes whatever the page (limits.h).  Cost: one
 * visit and one computed style per node read, O(the outline), not
 * O(the page), plus one count of the body's elements.
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
    "const doc=document,acting=new Set(o.acting),els=[],out=[];\n"
    "let used=0,walked=0,elems=0,stop='';\n"
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
    "'tooltip','treeitem','term','DisclosureTriangle']);\n"
    "const TEXTISH=new Set(['text','search','email','url','tel',\n"
    "'password','number','']);\n"
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
    "if(t==='input'){s+=' '+(x.type==='checkbox'||x.type==='radio'||\n"
    "x.type==='file'?'':x.value)+' ';return;}\n"
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
     * escaped, cut at o.name bytes with "...", in quotes. */
    "function qlen(s){\n"
    "let b=0,esc=0,cut=false;\n"
    "for(const ch of s){const c=ch.codePointAt(0),\n"
    "w=c<128?1:c<2048?2:c<65536?3:4;\n"
    "if(b+w>o.name){cut=true;break;}\n"
    "b+=w;if(ch==='\"'||ch==='\\\\')esc++;}\n"
    "return b+esc+(cut?3:0)+2;}\n"
    /* One node and its line's bytes; null, with stop set, when a bound
     * is reached (the root is always kept: with nothing else the
     * outline says what cut it).  A role is one of the words above,
     * shorter than any bound outline.c puts on a role. */
    "function emit(parent,role,name,depth,el,must){\n"
    "if(out.length>=o.nodes){stop='nodes';return null;}\n"
    "const text=role==='StaticText',ref=!text&&!!el&&acting.has(role);\n"
    "if(ref&&els.length>=o.refs){stop='refs';return null;}\n"
    "name=wf(name.length>o.name?name.slice(0,o.name+1):name);\n"
    "let c=2*depth+3;\n"
    "if(text)c+=5+qlen(name);\n"
    "else{c+=role.length;\n"
    "if(name||role==='RootWebArea')c+=1+qlen(name);\n"
    "if(ref)c+=9+String(els.length+1).length;}\n"
    "if(used+c>o.max){stop='size';if(!must)return null;}\n"
    "used+=c;\n"
    "const n={nodeId:String(out.length),role:{value:role},\n"
    "name:{value:name},childIds:[]};\n"
    "if(ref){n.backendDOMNodeId=els.length;els.push(el);}\n"
    "out.push(n);if(parent)parent.childIds.push(n.nodeId);return n;}\n"
    /* The text gathered since the last line, as one text line, unless
     * it is the whole name of what holds it. */
    "function flush(c){\n"
    "if(!c.t)return;const s=clean(c.t);c.t='';\n"
    "if(s&&s!==c.pname)emit(c.node,'StaticText',s,c.depth,null,false);}\n"
    /* One node of the document under the outline's node c.node.  What
     * has no role prints nothing: an inline one's text runs on, a block
     * ends the text before and after it.  Hidden (display: none,
     * aria-hidden, a closed details' content) is skipped;
     * visibility: hidden prints nothing but what inside it shows. */
    "function visit(x,c,nest,vis){\n"
    "if(stop)return;\n"
    "if(++walked>o.walk){stop='walk';return;}\n"
    "if(x.nodeType===3){if(vis&&c.t.length<o.name*4)c.t+=x.data;return;}\n"
    "if(x.nodeType!==1||nest>o.nest)return;\n"
    "const e=x,t=e.localName;\n"
    "elems++;\n"
    "if(SKIP.has(t)||e.getAttribute('aria-hidden')==='true')return;\n"
    "const st=getComputedStyle(e);if(st.display==='none')return;\n"
    "const v=st.visibility==='visible',role=v?roleOf(e,t):'';\n"
    "const list=t==='details'&&!e.open?\n"
    "[...e.children].filter(k=>k.localName==='summary'):kids(e);\n"
    "if(!role){\n"
    "if(t==='br'){c.t+=' ';return;}\n"
    "const inl=st.display==='inline'||st.display==='contents';\n"
    "if(!inl)flush(c);\n"
    "for(const k of list){visit(k,c,nest+1,v);if(stop)return;}\n"
    "if(!inl)flush(c);\n"
    "return;}\n"
    "flush(c);if(stop)return;\n"
    "const name=nameOf(e,t,role),n=emit(c.node,role,name,c.depth,e,false);\n"
    "if(!n||LEAF.has(t)||c.depth+1>o.depth)return;\n"
    "const k={node:n,depth:c.depth+1,pname:name,t:''};\n"
    "for(const x of list){visit(x,k,nest+1,v);if(stop)return;}\n"
    "flush(k);}\n"
    /* An element the walk cannot read (a throw) ends it there, with the
     * outline so far: the rest of the page is not lost to one element. */
    "const root=emit(null,'RootWebArea',clean(doc.title||''),0,null,true);\n"
    "if(!stop&&doc.body){const c={node:root,depth:1,pname:null,t:''};\n"
    "try{for(const k of kids(doc.body)){visit(k,c,1,true);if(stop)break;}\n"
    "flush(c);}catch(err){stop='error';}}\n"
    "globalThis.spacedRefs=els;\n"
    "return {nodes:out,cut:stop,walked:elems,\n"
    "total:doc.body?doc.body.getElementsByTagName('*').length:0};}\n";
#pragma GCC diagnostic pop

/*
 * ACT_SNAPSHOT_REF_JS(i): element i of the last snapshot of this world's
 * document, or null.  A world belongs to one document: after a
 * navigation its list, and every ref in it, is gone.
 */
static const char ACT_SNAPSHOT_REF_JS[] =
    "function(i){const a=globalThis.spacedRefs;"
    "return a&&Number.isInteger(i)&&a[i]||null;}";

#endif
