/**
 * The starter templates (issue 40): ordinary public templates of a system account
 * (STARTER_ACCOUNT_ID), each with sample data and options, seeded on a fresh local stack
 * (lib/local/stack.ts) and in the cloud by `npm run admin -- seed-starters` (docs/deploy.md).
 * `GET /v1/templates/public?starters=true` lists only them; the dashboard offers them on an
 * empty Templates page and behind "New from starter", each with its thumbnail
 * (lib/dashboard/site/starters/<slug>.png, drawn by `npm run starters:thumbnails`).
 */

export interface Starter {
  readonly name: string;
  readonly html: string;
  readonly header_html?: string;
  readonly footer_html?: string;
  readonly sample_variables: Record<string, unknown>;
  readonly pdf_options: Record<string, unknown>;
}

/** The slug of a starter's name: what its thumbnail is called. */
export const starterSlug = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const BASE_CSS = `
  * { box-sizing: border-box }
  body { font-family: Arimo, Arial, sans-serif; color: #1f2933; font-size: 10.5pt; line-height: 1.45; margin: 0 }
  h1 { font-size: 22pt; margin: 0 0 4pt; color: #102a43 }
  h2 { font-size: 13pt; margin: 18pt 0 6pt; color: #243b53 }
  table { width: 100%; border-collapse: collapse }
  th { text-align: left; font-size: 9pt; text-transform: uppercase; letter-spacing: .04em; color: #627d98; border-bottom: 1.5pt solid #243b53; padding: 5pt 6pt }
  td { padding: 6pt; border-bottom: .5pt solid #d9e2ec; vertical-align: top }
  .num { text-align: right; white-space: nowrap }
  .muted { color: #627d98 }
  .brand { color: #2f6fde; font-weight: bold; letter-spacing: .02em }
  .row { display: flex; justify-content: space-between; gap: 24pt }
  .totals { margin-left: auto; width: 45%; margin-top: 10pt }
  .totals td { border: none; padding: 3pt 6pt }
  .totals tr.grand td { border-top: 1.5pt solid #243b53; font-weight: bold; font-size: 12pt }
`;

const money = `{% macro money(v) %}{{ currency }} {{ "{:,.2f}".format(v) }}{% endmacro %}`;

const invoice: Starter = {
  name: 'Invoice',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invoice {{ number }}</title><style>${BASE_CSS}</style></head><body>
${money}
{% set subtotal = lines|sum(attribute='amount') %}{% set tax = subtotal * tax_rate %}
<div class="row"><div><div class="brand">{{ seller.name }}</div><div class="muted">{{ seller.address|join('<br>')|safe }}</div><div class="muted">VAT {{ seller.vat }}</div></div>
<div style="text-align:right"><h1>Invoice</h1><div>No. <b>{{ number }}</b></div><div>Issued {{ issued }}</div><div>Due {{ due }}</div></div></div>
<h2>Bill to</h2><div><b>{{ customer.name }}</b><br>{{ customer.address|join('<br>')|safe }}</div>
<h2>Items</h2>
<table><thead><tr><th>Description</th><th class="num">Qty</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead><tbody>
{% for l in lines %}<tr><td>{{ l.description }}</td><td class="num">{{ l.quantity }}</td><td class="num">{{ money(l.unit_price) }}</td><td class="num">{{ money(l.amount) }}</td></tr>{% endfor %}
</tbody></table>
<table class="totals"><tr><td>Subtotal</td><td class="num">{{ money(subtotal) }}</td></tr><tr><td>VAT {{ (tax_rate * 100)|round|int }}%</td><td class="num">{{ money(tax) }}</td></tr><tr class="grand"><td>Total due</td><td class="num">{{ money(subtotal + tax) }}</td></tr></table>
<h2>Payment</h2><p>Please pay by {{ due }} to IBAN <b>{{ seller.iban }}</b>, quoting <b>{{ number }}</b>.</p>
</body></html>`,
  footer_html:
    '<div style="font-size:8px;width:100%;text-align:center;color:#627d98">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
  sample_variables: {
    number: 'INV-2026-0042',
    issued: '29 November 2026',
    due: '29 December 2026',
    currency: 'EUR',
    tax_rate: 0.2,
    seller: {
      name: 'Northwind Studio',
      address: ['12 Harbour Street', '75002 Paris', 'France'],
      vat: 'FR12345678901',
      iban: 'FR76 3000 6000 0112 3456 7890 189',
    },
    customer: { name: 'Contoso Ltd', address: ['1 Market Square', 'Leeds LS1 2AB', 'United Kingdom'] },
    lines: [
      { description: 'Brand identity workshop (2 days)', quantity: 2, unit_price: 1200, amount: 2400 },
      { description: 'Logo design, three proposals', quantity: 1, unit_price: 1800, amount: 1800 },
      { description: 'Style guide (PDF, 24 pages)', quantity: 1, unit_price: 950, amount: 950 },
    ],
  },
  pdf_options: {
    format: 'A4',
    print_background: true,
    margins: { top: 0.7, right: 0.7, bottom: 0.8, left: 0.7 },
  },
};

const receipt: Starter = {
  name: 'Receipt',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Receipt {{ number }}</title><style>${BASE_CSS}
  body { font-family: Cousine, monospace; font-size: 9.5pt; max-width: 3.2in; margin: 0 auto } h1 { font-size: 14pt; text-align: center } .center { text-align: center }
  td { border: none; padding: 2pt 0 } hr { border: none; border-top: 1pt dashed #627d98 }</style></head><body>
${money}
{% set total = items|sum(attribute='price') %}
<h1>{{ shop.name }}</h1><div class="center muted">{{ shop.address }}<br>{{ shop.phone }}</div><hr>
<div>Receipt {{ number }}<br>{{ date }} {{ time }} · Till {{ till }}</div><hr>
<table>{% for i in items %}<tr><td>{{ i.name }}</td><td class="num">{{ money(i.price) }}</td></tr>{% endfor %}</table><hr>
<table><tr><td><b>TOTAL</b></td><td class="num"><b>{{ money(total) }}</b></td></tr><tr><td>Paid by {{ payment.method }}</td><td class="num">{{ money(payment.amount) }}</td></tr><tr><td>Change</td><td class="num">{{ money(payment.amount - total) }}</td></tr></table><hr>
<p class="center">Thank you for shopping with us!<br>Returns within 30 days with this receipt.</p>
</body></html>`,
  sample_variables: {
    number: 'R-88213',
    date: '29/11/2026',
    time: '14:32',
    till: 3,
    currency: '£',
    shop: { name: 'Corner Books & Coffee', address: '4 Mill Lane, York YO1 7HP', phone: '+44 1904 555 010' },
    items: [
      { name: 'Flat white', price: 3.2 },
      { name: 'Almond croissant', price: 2.9 },
      { name: 'Paperback: The Long Way Home', price: 9.99 },
      { name: 'Notebook, dotted A5', price: 6.5 },
    ],
    payment: { method: 'cash', amount: 25 },
  },
  pdf_options: { format: 'A5', margins: { top: 0.3, right: 0.3, bottom: 0.3, left: 0.3 } },
};

const quote: Starter = {
  name: 'Quote',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Quote {{ number }}</title><style>${BASE_CSS}
  .band { background: #f0f4f8; padding: 12pt 14pt; border-radius: 6pt } .opt td { color: #627d98; font-style: italic }</style></head><body>
${money}
{% set total = lines|sum(attribute='amount') %}
<div class="band row"><div><h1>Quote {{ number }}</h1><div class="muted">Valid until {{ valid_until }}</div></div><div style="text-align:right"><div class="brand">{{ company.name }}</div><div class="muted">{{ company.email }}</div></div></div>
<p>Dear {{ client.contact }},</p><p>{{ intro }}</p>
<table><thead><tr><th>Work</th><th class="num">Days</th><th class="num">Price</th></tr></thead><tbody>
{% for l in lines %}<tr{% if l.optional %} class="opt"{% endif %}><td>{{ l.description }}{% if l.optional %} (optional){% endif %}</td><td class="num">{{ l.days }}</td><td class="num">{{ money(l.amount) }}</td></tr>{% endfor %}
</tbody></table>
<table class="totals"><tr class="grand"><td>Total (excl. VAT)</td><td class="num">{{ money(total) }}</td></tr></table>
<h2>Terms</h2><ul>{% for t in terms %}<li>{{ t }}</li>{% endfor %}</ul>
<p style="margin-top:28pt">Accepted for {{ client.name }}: ________________________ Date: ____________</p>
</body></html>`,
  sample_variables: {
    number: 'Q-2026-117',
    valid_until: '31 December 2026',
    currency: 'USD',
    company: { name: 'Blue Fern Software', email: 'sales@bluefern.example' },
    client: { name: 'Acme Logistics', contact: 'Ms Rivera' },
    intro: 'Thank you for your enquiry. Here is our proposal for the new shipment tracking portal.',
    lines: [
      { description: 'Discovery and specification', days: 4, amount: 3200, optional: false },
      { description: 'Tracking portal (web, responsive)', days: 18, amount: 14400, optional: false },
      { description: 'Carrier API integrations (3)', days: 9, amount: 7200, optional: false },
      { description: 'Mobile push notifications', days: 5, amount: 4000, optional: true },
    ],
    terms: [
      '30% on signature, the balance on delivery.',
      'Prices exclude VAT.',
      'Hosting is billed separately.',
    ],
  },
  pdf_options: {
    format: 'LETTER',
    print_background: true,
    margins: { top: 0.6, right: 0.7, bottom: 0.7, left: 0.7 },
  },
};

const statement: Starter = {
  name: 'Account statement',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Statement {{ period }}</title><style>${BASE_CSS}
  nav a { display: block; color: #243b53; text-decoration: none; padding: 3pt 0; border-bottom: .5pt dotted #bcccdc }
  nav a::after { content: " … page " target-counter(attr(href), page); float: right; color: #627d98 }
  section { break-before: page } .neg { color: #c81e1e }</style></head><body>
${money}
<h1>Account statement</h1><div class="muted">{{ bank }} · {{ holder }} · Account {{ account }} · {{ period }}</div>
<h2>Contents</h2><nav>{% for m in months %}<a href="#m{{ loop.index }}">{{ m.name }}</a>{% endfor %}<a href="#summary">Summary</a></nav>
{% for m in months %}<section><h2 id="m{{ loop.index }}">{{ m.name }}</h2>
<table><thead><tr><th>Date</th><th>Description</th><th class="num">Amount</th></tr></thead><tbody>
{% for t in m.transactions %}<tr><td>{{ t.date }}</td><td>{{ t.text }}</td><td class="num{% if t.amount < 0 %} neg{% endif %}">{{ money(t.amount) }}</td></tr>{% endfor %}
</tbody></table><p class="muted">Closing balance: <b>{{ money(m.closing) }}</b></p></section>{% endfor %}
<section><h2 id="summary">Summary</h2><table><thead><tr><th>Month</th><th class="num">In</th><th class="num">Out</th><th class="num">Closing</th></tr></thead><tbody>
{% for m in months %}{% set ins = m.transactions|selectattr('amount', 'gt', 0)|sum(attribute='amount') %}{% set outs = m.transactions|selectattr('amount', 'lt', 0)|sum(attribute='amount') %}<tr><td>{{ m.name }}</td><td class="num">{{ money(ins) }}</td><td class="num neg">{{ money(outs) }}</td><td class="num">{{ money(m.closing) }}</td></tr>{% endfor %}
</tbody></table></section>
</body></html>`,
  footer_html:
    '<div style="font-size:8px;width:100%;padding:0 40px;color:#627d98;display:flex;justify-content:space-between"><span>Statement</span><span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>',
  sample_variables: {
    bank: 'Harbor Savings Bank',
    holder: 'Jordan Lee',
    account: '•••• 4821',
    period: 'Q3 2026',
    currency: '$',
    months: [
      {
        name: 'July 2026',
        closing: 5210.4,
        transactions: [
          { date: '01 Jul', text: 'Salary, Initech Inc.', amount: 4200 },
          { date: '03 Jul', text: 'Rent, Maple Apartments', amount: -1650 },
          { date: '11 Jul', text: 'Groceries, Fresh Market', amount: -184.35 },
          { date: '19 Jul', text: 'Electricity, City Power', amount: -92.1 },
        ],
      },
      {
        name: 'August 2026',
        closing: 7015.8,
        transactions: [
          { date: '01 Aug', text: 'Salary, Initech Inc.', amount: 4200 },
          { date: '03 Aug', text: 'Rent, Maple Apartments', amount: -1650 },
          { date: '14 Aug', text: 'Flight, Skyway Airlines', amount: -612.6 },
          { date: '28 Aug', text: 'Refund, Gadget Store', amount: 58 },
        ],
      },
      {
        name: 'September 2026',
        closing: 8720.25,
        transactions: [
          { date: '01 Sep', text: 'Salary, Initech Inc.', amount: 4200 },
          { date: '03 Sep', text: 'Rent, Maple Apartments', amount: -1650 },
          { date: '16 Sep', text: 'Insurance, Safe Home', amount: -340.55 },
          { date: '25 Sep', text: 'Restaurant, Blue Door', amount: -95 },
        ],
      },
    ],
  },
  pdf_options: {
    format: 'A4',
    paged_media: true,
    outline: true,
    margins: { top: 0.7, right: 0.7, bottom: 0.8, left: 0.7 },
  },
};

const certificate: Starter = {
  name: 'Certificate',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Certificate</title><style>
  @page { margin: 0 } body { margin: 0; font-family: Tinos, 'Times New Roman', serif; color: #102a43 }
  .frame { position: absolute; inset: 0.35in; border: 6pt double #b08d3c; padding: 0.6in; text-align: center; display: flex; flex-direction: column; justify-content: center }
  .kicker { letter-spacing: .35em; text-transform: uppercase; color: #b08d3c; font-size: 12pt }
  h1 { font-size: 40pt; margin: 8pt 0 }
  .name { font-size: 30pt; font-style: italic; border-bottom: 1pt solid #b08d3c; display: inline-block; padding: 0 30pt 4pt; margin: 10pt 0 }
  .sign { display: flex; justify-content: space-around; margin-top: 36pt; font-size: 11pt }
  .sign div { border-top: 1pt solid #102a43; padding-top: 4pt; width: 2.4in }</style></head><body>
<div class="frame"><div class="kicker">{{ organisation }}</div><h1>Certificate of {{ kind }}</h1><div>This certifies that</div>
<div><span class="name">{{ recipient }}</span></div><div>has successfully completed <b>{{ course }}</b><br>({{ hours }} hours) on {{ date }}.</div>
<div class="sign">{% for s in signatories %}<div>{{ s.name }}<br><span style="color:#627d98">{{ s.title }}</span></div>{% endfor %}</div>
<div style="margin-top:18pt;font-size:9pt;color:#627d98">Certificate no. {{ number }}</div></div>
</body></html>`,
  sample_variables: {
    organisation: 'Open Data Academy',
    kind: 'Completion',
    recipient: 'Amara Okafor',
    course: 'Data Visualisation with Python',
    hours: 24,
    date: '29 November 2026',
    number: 'ODA-2026-0931',
    signatories: [
      { name: 'Dr. Helen Park', title: 'Programme Director' },
      { name: 'Luis Moreno', title: 'Lead Instructor' },
    ],
  },
  pdf_options: {
    format: 'A4',
    landscape: true,
    print_background: true,
    margins: { top: 0, right: 0, bottom: 0, left: 0 },
  },
};

const letter: Starter = {
  name: 'Business letter',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ subject }}</title><style>${BASE_CSS}
  body { font-family: Tinos, 'Times New Roman', serif; font-size: 11.5pt } .sender { text-align: right } .date { margin: 24pt 0 } p { margin: 0 0 10pt }</style></head><body>
<div class="sender"><div class="brand" style="font-family: Arimo, sans-serif">{{ sender.company }}</div>{{ sender.address|join('<br>')|safe }}</div>
<div style="margin-top:30pt">{{ recipient.name }}<br>{{ recipient.address|join('<br>')|safe }}</div>
<div class="date">{{ place }}, {{ date }}</div>
<p><b>Subject: {{ subject }}</b></p>
<p>Dear {{ recipient.salutation }},</p>
{% for p in paragraphs %}<p>{{ p }}</p>{% endfor %}
<p>Yours sincerely,</p><p style="margin-top:36pt">{{ sender.name }}<br><span class="muted">{{ sender.role }}</span></p>
</body></html>`,
  sample_variables: {
    sender: {
      company: 'Greenleaf Architects',
      name: 'Sofia Brandt',
      role: 'Managing Partner',
      address: ['Lindenstraße 14', '10969 Berlin', 'Germany'],
    },
    recipient: {
      name: 'Mr Tomas Novak',
      salutation: 'Mr Novak',
      address: ['Novak Developments s.r.o.', 'Vinohradská 21', '120 00 Prague'],
    },
    place: 'Berlin',
    date: '29 November 2026',
    subject: 'Planning permission for the Riverside project',
    paragraphs: [
      'We are pleased to let you know that the city has granted planning permission for the Riverside residential project, as submitted on 3 September.',
      'The permission comes with two conditions: a revised landscaping plan for the courtyard, and a noise study for the balconies facing the railway. We will prepare both within four weeks.',
      'We propose to meet in the week of 7 December to agree on the construction timetable. Please let us know which day suits you.',
    ],
  },
  pdf_options: { format: 'A4', margins: { top: 1, right: 1, bottom: 1, left: 1.1 } },
};

const label: Starter = {
  name: 'Shipping label',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Label {{ tracking }}</title><style>
  @page { margin: 0 } body { margin: 0; font-family: Arimo, Arial, sans-serif; color: #000 }
  .label { border: 2pt solid #000; margin: 8pt; height: calc(100vh - 16pt); display: grid; grid-template-rows: auto auto 1fr auto }
  .cell { border-bottom: 2pt solid #000; padding: 8pt } .small { font-size: 8pt; text-transform: uppercase; letter-spacing: .08em }
  .to { font-size: 15pt; font-weight: bold; line-height: 1.25 } .svc { font-size: 28pt; font-weight: 900; text-align: right }
  .bars { display: flex; height: 70pt; align-items: stretch; gap: 0; margin: 6pt 0 } .bars span { background: #000 }
  .track { text-align: center; font-family: Cousine, monospace; font-size: 13pt; letter-spacing: .12em }</style></head><body>
<div class="label">
<div class="cell" style="display:flex;justify-content:space-between"><div><div class="small">From</div>{{ sender.name }}<br>{{ sender.address|join(', ') }}</div><div class="svc">{{ service }}</div></div>
<div class="cell"><div class="small">Ship to</div><div class="to">{{ recipient.name }}<br>{{ recipient.address|join('<br>')|safe }}</div></div>
<div class="cell"><div class="small">Tracking</div><div class="bars">{% for c in tracking %}{% set w = (c|int(5) % 4) + 1 %}<span style="width:{{ w }}pt;margin-right:{{ 5 - w }}pt"></span>{% endfor %}</div><div class="track">{{ tracking }}</div></div>
<div class="cell" style="border-bottom:none;display:flex;justify-content:space-between"><span>Weight {{ weight_kg }} kg</span><span>Parcel {{ parcel }} of {{ parcels }}</span><span>{{ date }}</span></div>
</div></body></html>`,
  sample_variables: {
    service: 'EXPRESS',
    tracking: '1Z999AA10123456784',
    date: '2026-11-29',
    weight_kg: 2.4,
    parcel: 1,
    parcels: 2,
    sender: { name: 'Tinker Toys Ltd', address: ['Unit 5, Riverside Park', 'Bristol BS1 6XN', 'UK'] },
    recipient: {
      name: 'Priya Sharma',
      address: ['Flat 3B, 27 Orchard Road', 'Manchester M14 5TR', 'United Kingdom'],
    },
  },
  pdf_options: { format: 'A5', print_background: true, margins: { top: 0, right: 0, bottom: 0, left: 0 } },
};

const report: Starter = {
  name: 'Multi-page report',
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title><style>${BASE_CSS}
  .cover { height: 9.2in; display: flex; flex-direction: column; justify-content: center; border-left: 10pt solid #2f6fde; padding-left: 24pt }
  .cover h1 { font-size: 34pt } .kpis { display: flex; gap: 10pt; margin: 12pt 0 } .kpi { flex: 1; background: #f0f4f8; border-radius: 6pt; padding: 10pt }
  .kpi b { display: block; font-size: 18pt; color: #102a43 } section { break-before: page }
  .bar { height: 10pt; background: #2f6fde; border-radius: 2pt }</style></head><body>
<div class="cover"><div class="muted">{{ organisation }}</div><h1>{{ title }}</h1><div class="muted">{{ subtitle }}</div><div style="margin-top:24pt">{{ date }} · Prepared by {{ author }}</div></div>
{% for s in sections %}<section><h1>{{ loop.index }}. {{ s.title }}</h1>
{% if s.kpis is defined %}<div class="kpis">{% for k in s.kpis %}<div class="kpi"><span class="muted">{{ k.label }}</span><b>{{ k.value }}</b></div>{% endfor %}</div>{% endif %}
{% for p in s.paragraphs %}<p>{{ p }}</p>{% endfor %}
{% if s.table is defined %}<table><thead><tr>{% for h in s.table.head %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>{% for r in s.table.rows %}<tr>{% for c in r %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}</tbody></table>{% endif %}
{% if s.bars is defined %}{% set top = s.bars|map(attribute='value')|max %}<table>{% for b in s.bars %}<tr><td style="width:30%">{{ b.label }}</td><td><div class="bar" style="width:{{ (b.value / top * 100)|round(1) }}%"></div></td><td class="num">{{ b.value }}</td></tr>{% endfor %}</table>{% endif %}
</section>{% endfor %}
</body></html>`,
  header_html:
    '<div style="font-size:8px;width:100%;padding:0 48px;color:#627d98;display:flex;justify-content:space-between"><span class="title"></span><span class="date"></span></div>',
  footer_html:
    '<div style="font-size:8px;width:100%;text-align:center;color:#627d98">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
  sample_variables: {
    organisation: 'Riverbend Community Energy',
    title: 'Annual Report 2026',
    subtitle: 'Solar generation, members and finances',
    date: 'November 2026',
    author: 'The board of directors',
    sections: [
      {
        title: 'Highlights',
        kpis: [
          { label: 'Generated', value: '1.84 GWh' },
          { label: 'Members', value: '1,212' },
          { label: 'CO₂ avoided', value: '736 t' },
        ],
        paragraphs: [
          'Our third full year of operation was our best yet: the two new rooftop arrays at the school and the sports centre came online in April and added a quarter to our output.',
          'Membership grew by 18%, and for the first time more than half of our new members live within two kilometres of an array.',
        ],
      },
      {
        title: 'Generation',
        paragraphs: [
          'Output tracked the sunniest spring on record, then a cloudy August. The table shows each site’s production against its forecast.',
        ],
        table: {
          head: ['Site', 'Capacity', 'Generated', 'Forecast'],
          rows: [
            ['Mill Roof', '420 kWp', '452 MWh', '430 MWh'],
            ['Library', '180 kWp', '181 MWh', '190 MWh'],
            ['St Anne’s School', '510 kWp', '396 MWh', '410 MWh'],
            ['Sports Centre', '640 kWp', '812 MWh', '760 MWh'],
          ],
        },
        bars: [
          { label: 'Mill Roof', value: 452 },
          { label: 'Library', value: 181 },
          { label: 'St Anne’s School', value: 396 },
          { label: 'Sports Centre', value: 812 },
        ],
      },
      {
        title: 'Finances',
        kpis: [
          { label: 'Revenue', value: '£268k' },
          { label: 'Surplus', value: '£41k' },
          { label: 'Member interest', value: '4.0%' },
        ],
        paragraphs: [
          'Revenue came from selling electricity to the host buildings at a discount and exporting the rest to the grid. Operating costs were in line with the budget.',
          'The board proposes to pay members 4.0% interest and to put £20,000 into the community fund, which this year supported insulation for 32 homes.',
          'A full set of audited accounts is available to members on request.',
        ],
      },
      {
        title: 'Looking ahead',
        paragraphs: [
          'In 2027 we plan a battery at the Sports Centre, so that more of what we generate at midday is used in the evening, and a share offer to fund two more rooftops.',
          'Thank you to our members, volunteers and host organisations for another year of clean power made in our town.',
        ],
      },
    ],
  },
  pdf_options: {
    format: 'LETTER',
    print_background: true,
    outline: true,
    margins: { top: 0.8, right: 0.8, bottom: 0.8, left: 0.8 },
  },
};

/** Every starter, in the order the dashboard offers them. */
export const STARTERS: readonly Starter[] = [
  invoice,
  receipt,
  quote,
  statement,
  certificate,
  letter,
  label,
  report,
];
