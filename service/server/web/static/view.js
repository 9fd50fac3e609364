// selfhub's web view: the little the pages do in the browser. Everything shown is set as
// text (never as markup), so an event's text cannot add elements to the page.
"use strict";

// The sign-in form returns to the page that asked for it.
function rememberPage() {
  const next = document.querySelector("form.signin input[name=next]");
  if (next && location.pathname !== "/signin") {
    next.value = location.pathname + location.search;
  }
}

function recordHref(ws, event) {
  const entity = event.payload && event.payload.entity;
  if (!event.project || !entity) return null;
  return ["ws", ws, "projects", event.project, "records", entity].map(encodeURIComponent).join("/");
}

// The text of a record this page links to (an event on a record names it by its id only).
function shownText(entity) {
  if (!entity) return null;
  const own = document.querySelector("h1.record-text");
  if (own && location.pathname.endsWith("/records/" + encodeURIComponent(entity))) return own.textContent;
  for (const link of document.querySelectorAll("main a[href]")) {
    if (link.pathname.endsWith("/records/" + encodeURIComponent(entity))) return link.textContent;
  }
  return entity;
}

function eventItem(ws, event) {
  const item = document.createElement("li");
  item.className = "live-event";
  const kind = document.createElement("strong");
  kind.textContent = event.type;
  item.append(kind, " ");
  const text = (event.payload && event.payload.text) || shownText(event.payload && event.payload.entity) || event.id;
  const href = recordHref(ws, event);
  const label = document.createElement(href ? "a" : "span");
  if (href) label.href = "/" + href;
  label.textContent = text;
  item.append(label);
  const who = event.origin && event.origin.by ? " by " + event.origin.by : "";
  item.append(" · " + (event.project || "workspace") + who);
  return item;
}

// New events of the workspace (of the page's project) as they are committed.
function follow() {
  const live = document.getElementById("live");
  if (!live || !window.EventSource) return;
  const state = document.getElementById("live-state");
  const list = document.getElementById("live-events");
  const source = new EventSource(live.dataset.stream);
  source.onopen = () => { state.textContent = "connected"; live.dataset.connected = "1"; };
  source.onerror = () => { state.textContent = "reconnecting"; };
  source.onmessage = (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    list.prepend(eventItem(live.dataset.ws, event));
    live.hidden = false;
  };
}

document.addEventListener("DOMContentLoaded", () => { rememberPage(); follow(); });
