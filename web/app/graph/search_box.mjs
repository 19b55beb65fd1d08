// The graph view's search box: matches of nodes, tensors and op types (search.mjs) as a list, arrow
// keys move the highlight, Enter or a click chooses, Escape closes.
import { searchGraph } from './search.mjs';

/**
 * mountSearchBox(box, {graph(), choose(match), close()}) -> {open()}
 * box: the view's `.graph-search` element (an <input> and a <ul>); graph(): the graph JSON shown now.
 */
export function mountSearchBox(box, { graph, choose, close }) {
  const input = box.querySelector('input');
  const list = box.querySelector('ul');
  let matches = [];
  let active = 0; // highlighted match, chosen by Enter
  const highlight = (i) => {
    active = Math.max(0, Math.min(i, matches.length - 1));
    [...list.children].forEach((li, j) => li.classList.toggle('active', j === active));
    list.children[active]?.scrollIntoView({ block: 'nearest' });
  };
  input.addEventListener('input', () => {
    matches = graph() ? searchGraph(graph(), input.value) : [];
    list.replaceChildren(...matches.map((m, i) => {
      const li = document.createElement('li');
      li.dataset.index = String(i);
      li.className = `match-${m.kind}`;
      li.innerHTML = '<span class="match-text"></span> <span class="match-detail"></span>';
      li.firstChild.textContent = m.text;
      li.lastChild.textContent = m.detail;
      return li;
    }));
    highlight(0);
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') choose(matches[active]);
    else if (ev.key === 'Escape') {
      box.hidden = true;
      close();
    } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      highlight(active + (ev.key === 'ArrowDown' ? 1 : -1));
    }
  });
  list.addEventListener('click', (ev) => choose(matches[Number(ev.target.closest('li')?.dataset.index)]));
  return {
    open() {
      box.hidden = false;
      input.focus();
      input.select();
    },
  };
}
