// The one banner of the plugin: shown when this page is not a Netron the plugin understands (then the
// plugin does nothing else) or when a render stops matching it (then it stops colouring).
import { h } from './dom.mjs';

export const BANNER_ID = 'ptqscope-banner';

export function showBanner(doc, message, problems = []) {
  let banner = doc.getElementById(BANNER_ID);
  if (!banner) {
    banner = h(doc, 'div', { id: BANNER_ID, role: 'alert', style: BANNER_STYLE });
    doc.body.append(banner);
  }
  banner.textContent = '';
  const close = h(doc, 'button', { type: 'button', 'aria-label': 'dismiss', style: 'margin-left:12px;cursor:pointer', text: '×' });
  close.addEventListener('click', () => banner.remove());
  banner.append(h(doc, 'strong', { text: 'ptqscope plugin: ' }), message);
  if (problems.length) banner.append(h(doc, 'span', { class: 'ptq-banner-details', text: ` (${problems.join('; ')})` }));
  banner.append(close);
  return banner;
}

// Inline style: the banner must work even when our stylesheet was never added.
const BANNER_STYLE = 'position:fixed;top:0;left:0;right:0;z-index:10000;padding:6px 12px;background:#fff4ce;' +
  'color:#3b2f00;border-bottom:1px solid #d6b656;font:12px sans-serif;';
