"""Sandbox data operations (E3-E7, E9-E15 and the named creation operations)."""
import random

from common import (ApiError, fmt, obj, s, i32, parse_date, today, new_id, link, qbool, qint, qdate,
                    only_query, make_iban)
from validate import currency, country, iban as check_iban
from store import LOCK

CASH_TYPES = set("CACC CASH CHAR CISH COMM CPAC LLSV LOAN MGLD MOMA NREX ODFT ONDP OTHR SACC SLRY SVGS TAXE TRAN TRAS".split())
ROLES = ["OWNER", "DISPOSAL", "VIEW", "REGISTER", "APPROVE", "INTERNAL_TRANSFER", "SALARY"]
BAL_TYPES = ("closingBooked", "expected")


def nf(what):
    return ApiError(404, "RESOURCE_UNKNOWN", f"{what} not found")


def bad(msg):
    return ApiError(400, "BAD_REQUEST", msg)


def arr(v, path, maxn=100):
    if not isinstance(v, list) or not v:
        raise fmt("must be a non-empty array", path)
    if len(v) > maxn:
        raise fmt(f"at most {maxn} items", path)
    return v


def no_query(ctx):
    only_query(ctx.query, ())


# ---------------------------------------------------------------- customers
def customer_view(w, c, with_accounts=True, with_agreements=True):
    ags = []
    if with_agreements:
        for ag in w.agreements.values():
            mine = [e["id"] for e in ag["engagements"] if e["customer"] == c["customerId"]]
            if ag.get("owner") == c["customerId"] or mine:
                ags.append({"id": ag["id"], "name": ag["name"], "engagements": mine,
                            "_links": {"self": link(f"/v1/sandbox/agreements/{ag['id']}"),
                                       "engagements": link(f"/v1/sandbox/agreements/{ag['id']}/engagements", "POST")}})
    return {"customerId": c["customerId"], "customerNumber": c["customerNumber"], "customerType": c["customerType"],
            "customerName": c["customerName"], "agreements": ags,
            "accounts": [a["id"] for a in w.accounts.values() if a["customerNumber"] == c["customerNumber"]] if with_accounts else [],
            "cardAccounts": [k["resourceId"] for k in w.cards.values() if k["customerNumber"] == c["customerNumber"]] if with_accounts else [],
            "_links": {"self": link(f"/v1/sandbox/customers/{c['customerId']}")}}


def create_customer(ctx):
    no_query(ctx)
    b = obj(ctx.body, "body", ("customerType", "customerName"), ("customerNumber",))
    s(b["customerType"], "customerType", enum={"PRIVATE", "CORPORATE"})
    s(b["customerName"], "customerName", maxlen=70)
    w = ctx.world
    with LOCK:
        if "customerNumber" in b:
            s(b["customerNumber"], "customerNumber", pattern=r"[1-9]\d{5,10}")
            if w.customer_by_number(b["customerNumber"]):
                raise ApiError(409, "CONFLICT", "customerNumber already exists")
            num = b["customerNumber"]
        else:
            num = w.new_customer_number()
        c = {"customerId": new_id(), "customerNumber": num, "customerType": b["customerType"],
             "customerName": b["customerName"]}
        w.customers[c["customerId"]] = c
        return 201, customer_view(w, c), {"Location": f"/v1/sandbox/customers/{c['customerId']}"}


def list_customers(ctx):
    only_query(ctx.query, ("withAccounts", "withAgreements"))
    wa, wg = qbool(ctx.query, "withAccounts"), qbool(ctx.query, "withAgreements")
    with LOCK:
        return 200, [customer_view(ctx.world, c, wa, wg) for c in ctx.world.customers.values()], {}


def get_customer(ctx, customerId):
    no_query(ctx)
    with LOCK:
        c = ctx.world.customers.get(customerId)
        if not c:
            raise nf("customer")
        return 200, customer_view(ctx.world, c), {}


# ---------------------------------------------------------------- accounts
def balances_view(cur, bal):
    return [{"balanceAmount": {"currency": cur, "amount": bal[t]}, "balanceType": t} for t in BAL_TYPES if t in bal]


def account_view(a):
    return {"id": a["id"], "customerNumber": a["customerNumber"], "accountName": a["accountName"], "bban": a["bban"],
            "iban": a["iban"], "currency": a["currency"], "product": a["product"],
            "cashAccountType": a["cashAccountType"], "creditLine": a["creditLine"],
            "balances": balances_view(a["currency"], a["balances"]),
            "_links": {"self": link(f"/v1/sandbox/accounts/{a['id']}"),
                       "transactions": link(f"/v1/sandbox/accounts/{a['id']}/transactions", "GET", "POST")}}


def parse_balances(v, cur, path="body"):
    arr(v, path, maxn=2)
    out = {}
    for n, it in enumerate(v):
        p = f"{path}[{n}]"
        obj(it, p, ("balanceAmount", "balanceType"))
        ba = obj(it["balanceAmount"], p + ".balanceAmount", ("currency", "amount"))
        if currency(ba["currency"], p + ".balanceAmount.currency") != cur:
            raise fmt("must be the account currency " + cur, p + ".balanceAmount.currency")
        i32(ba["amount"], p + ".balanceAmount.amount")
        t = s(it["balanceType"], p + ".balanceType", enum=set(BAL_TYPES))
        if t in out:
            raise fmt("balanceType repeated", p + ".balanceType")
        out[t] = ba["amount"]
    return out


def create_account(ctx):
    no_query(ctx)
    b = obj(ctx.body, "body", ("customerNumber", "accountName", "currency", "product"),
            ("cashAccountType", "creditLine", "balances"))
    w = ctx.world
    maxname = 70 if "longer-name" in ctx.fixes else 35
    s(b["accountName"], "accountName", maxlen=maxname)
    cur = currency(b["currency"], "currency")
    s(b["product"], "product", maxlen=70)
    cat = s(b.get("cashAccountType", "CACC"), "cashAccountType", enum=CASH_TYPES)
    cl = i32(b.get("creditLine", 0), "creditLine", minimum=0)
    bal = {"closingBooked": 0, "expected": 0}
    if "balances" in b:
        bal.update(parse_balances(b["balances"], cur, "balances"))
    with LOCK:
        if not w.customer_by_number(s(b["customerNumber"], "customerNumber")):
            raise bad("customerNumber is not a sandbox customer")
        bban = w.new_bban()
        a = {"id": new_id(), "customerNumber": b["customerNumber"], "accountName": b["accountName"], "bban": bban,
             "iban": make_iban("NO", bban), "currency": cur, "product": b["product"], "cashAccountType": cat,
             "creditLine": cl, "balances": bal}
        w.accounts[a["id"]] = a
        w.transactions[a["id"]] = []
        return 201, account_view(a), {"Location": f"/v1/sandbox/accounts/{a['id']}"}


def _acct(ctx, mockAccountId):
    a = ctx.world.accounts.get(mockAccountId)
    if not a:
        raise nf("account")
    return a


def get_account(ctx, mockAccountId):
    no_query(ctx)
    with LOCK:
        return 200, [account_view(_acct(ctx, mockAccountId))], {}


def delete_account(ctx, mockAccountId):
    no_query(ctx)
    with LOCK:
        _acct(ctx, mockAccountId)
        del ctx.world.accounts[mockAccountId]
        ctx.world.transactions.pop(mockAccountId, None)
        return 204, None, {}


def change_balance(ctx, mockAccountId):
    no_query(ctx)
    with LOCK:
        a = _acct(ctx, mockAccountId)
        a["balances"].update(parse_balances(ctx.body, a["currency"]))
        return 204, None, {}


# ---------------------------------------------------------------- account transactions
def tx_view(aid, t):
    v = {k: t[k] for k in ("id", "amount", "currency", "valueDate", "bookingDate", "remittanceInformationUnstructured",
                           "creditorName", "creditorAccount", "debtorName", "debtorAccount", "bankTransactionCode",
                           "ultimateDebtor", "ultimateCreditor", "purposeCode")}
    v["_links"] = {"self": link(f"/v1/sandbox/accounts/{aid}/transactions/{t['id']}")}
    return v


def check_dates(booking, value, pb, pv):
    bd, vd = parse_date(booking, pb), parse_date(value, pv)
    if bd > today() or vd > today():
        raise bad(f"{pb} and {pv} must be before the current time")
    if bd > vd:
        raise bad(f"{pb} must not be after {pv}")


def create_transactions(ctx, mockAccountId):
    no_query(ctx)
    with LOCK:
        a = _acct(ctx, mockAccountId)
        items = arr(ctx.body, "body")
        made = []
        for n, it in enumerate(items):
            p = f"body[{n}]"
            obj(it, p, ("amount", "currency", "valueDate", "bookingDate", "remittanceInformationUnstructured",
                        "creditorName", "creditorAccount", "debtorName", "debtorAccount", "bankTransactionCode",
                        "ultimateDebtor", "ultimateCreditor", "purposeCode", "creditorId"))
            amt = i32(it["amount"], p + ".amount")
            if amt == 0:
                raise fmt("must not be zero", p + ".amount")
            if currency(it["currency"], p + ".currency") != a["currency"]:
                raise fmt("must be the account currency", p + ".currency")
            check_dates(it["bookingDate"], it["valueDate"], p + ".bookingDate", p + ".valueDate")
            s(it["remittanceInformationUnstructured"], p + ".remittanceInformationUnstructured", maxlen=140)
            for k in ("creditorName", "debtorName", "ultimateDebtor", "ultimateCreditor"):
                s(it[k], f"{p}.{k}", maxlen=70)
            s(it["creditorId"], p + ".creditorId", maxlen=35)
            s(it["bankTransactionCode"], p + ".bankTransactionCode", minlen=4, maxlen=14)
            s(it["purposeCode"], p + ".purposeCode", maxlen=4, pattern=r"[A-Z]{1,4}")
            for side in ("creditorAccount", "debtorAccount"):
                r = obj(it[side], f"{p}.{side}", ("iban", "bban"))
                s(r["bban"], f"{p}.{side}.bban", maxlen=30)
                check_iban(r["iban"], f"{p}.{side}.iban")
            d = it["debtorAccount"]
            if d["iban"] != a["iban"] or d["bban"] != a["bban"]:
                raise bad(f"{p}.debtorAccount: a transaction with another account as its debtor is rejected")
            t = dict(it, id=new_id())
            made.append(t)
        ctx.world.transactions[a["id"]].extend(made)
        return 201, [tx_view(a["id"], t) for t in made], {}


def page(items, q):
    off = qint(q, "offset", 0, 0)
    lim = qint(q, "limit", 1, 200)
    return items[off:off + lim]


def list_transactions(ctx, mockAccountId):
    only_query(ctx.query, ("fromDate", "toDate", "offset", "limit"))
    fd, td = qdate(ctx.query, "fromDate"), qdate(ctx.query, "toDate")
    if fd and td and fd > td:
        raise ApiError(400, "FORMAT_ERROR", "fromDate is after toDate")
    with LOCK:
        a = _acct(ctx, mockAccountId)
        txs = [t for t in ctx.world.transactions[a["id"]]
               if (not fd or t["bookingDate"] >= fd.isoformat()) and (not td or t["bookingDate"] <= td.isoformat())]
        return 200, [tx_view(a["id"], t) for t in page(txs, ctx.query)], {}


def get_transaction(ctx, mockAccountId, mockTransactionId):
    no_query(ctx)
    with LOCK:
        a = _acct(ctx, mockAccountId)
        for t in ctx.world.transactions[a["id"]]:
            if t["id"] == mockTransactionId:
                return 200, tx_view(a["id"], t), {}
        raise nf("transaction")


# ---------------------------------------------------------------- card accounts
def card_view(k):
    return {"cardAccount": {
        "resourceId": k["resourceId"], "maskedPan": k["maskedPan"], "currency": k["currency"],
        "creditLimit": {"currency": k["currency"], "amount": k["creditLimit"]},
        "balances": balances_view(k["currency"], k["balances"]),
        "cardId": k["cardId"], "cardIdVNo": k["cardIdVNo"], "accountNumber": k["accountNumber"],
        "expiry": k["expiry"], "name": k["name"], "product": k["product"], "status": k["status"],
        "_links": {"self": link(f"/v1/sandbox/card-accounts/{k['resourceId']}"),
                   "transactions": link(f"/v1/sandbox/card-accounts/{k['resourceId']}/transactions", "GET", "POST")}}}


def create_card_account(ctx):
    no_query(ctx)
    b = obj(ctx.body, "body", ("customerNumber", "name", "product", "currency", "creditLimit"), ("status",))
    s(b["name"], "name", maxlen=70)
    s(b["product"], "product", maxlen=70)
    cur = currency(b["currency"], "currency")
    cl = obj(b["creditLimit"], "creditLimit", ("currency", "amount"))
    if currency(cl["currency"], "creditLimit.currency") != cur:
        raise fmt("must be the card account currency", "creditLimit.currency")
    i32(cl["amount"], "creditLimit.amount", minimum=0)
    st = s(b.get("status", "enabled"), "status", enum={"enabled", "deleted", "blocked"})
    w = ctx.world
    with LOCK:
        if not w.customer_by_number(s(b["customerNumber"], "customerNumber")):
            raise bad("customerNumber is not a sandbox customer")
        last4 = "".join(random.choice("0123456789") for _ in range(4))
        t = today()
        k = {"resourceId": new_id(), "customerNumber": b["customerNumber"], "maskedPan": "552233******" + last4,
             "currency": cur, "creditLimit": cl["amount"], "balances": {"closingBooked": 0, "expected": 0},
             "cardId": "".join(random.choice("0123456789") for _ in range(10)), "cardIdVNo": "1",
             "accountNumber": w.new_bban(), "expiry": f"{t.month:02d}/{(t.year + 4) % 100:02d}",
             "name": b["name"], "product": b["product"], "status": st}
        w.cards[k["resourceId"]] = k
        w.card_tx[k["resourceId"]] = []
        return 201, card_view(k), {"Location": f"/v1/sandbox/card-accounts/{k['resourceId']}"}


def _card(ctx, mockCardAccountId):
    k = ctx.world.cards.get(mockCardAccountId)
    if not k:
        raise nf("card account")
    return k


def get_card_account(ctx, mockCardAccountId):
    no_query(ctx)
    with LOCK:
        return 200, card_view(_card(ctx, mockCardAccountId)), {}


def card_tx_view(t, swap):
    ta, oa = t["transactionAmount"], t["originalAmount"]
    if swap:
        ta, oa = oa, ta
    return {"cardTransactionId": t["cardTransactionId"], "bookingDate": t["bookingDate"],
            "transactionDate": t["transactionDate"], "transactionAmount": dict(ta), "originalAmount": dict(oa),
            "merchantCategoryCode": t["merchantCategoryCode"]}


def money_i32(v, p):
    m = obj(v, p, ("currency", "amount"))
    currency(m["currency"], p + ".currency")
    i32(m["amount"], p + ".amount")


def create_card_transactions(ctx, mockCardAccountId):
    no_query(ctx)
    with LOCK:
        k = _card(ctx, mockCardAccountId)
        if k["status"] != "enabled":
            raise bad("card account is not enabled")
        items = arr(ctx.body, "body")
        made, ids = [], {t["cardTransactionId"] for t in ctx.world.card_tx[k["resourceId"]]}
        for n, it in enumerate(items):
            p = f"body[{n}]"
            obj(it, p, ("cardTransactionId", "terminalId", "bookingDate", "transactionDate", "transactionAmount",
                        "originalAmount", "merchantCategoryCode", "cardAcceptorId", "maskedPan", "transactionDetails",
                        "proprietaryBankTransactionCode", "invoiced", "markupFee", "markupFeePercentage",
                        "cardAcceptorAddress"), ("currencyExchange",))
            for f in ("cardTransactionId", "terminalId", "cardAcceptorId", "transactionDetails",
                      "proprietaryBankTransactionCode", "maskedPan"):
                s(it[f], f"{p}.{f}", maxlen=140)
            s(it["proprietaryBankTransactionCode"], p + ".proprietaryBankTransactionCode", maxlen=35)
            s(it["merchantCategoryCode"], p + ".merchantCategoryCode", pattern=r"\d{4}")
            s(it["invoiced"], p + ".invoiced", enum={"true", "false"})
            s(it["markupFeePercentage"], p + ".markupFeePercentage", pattern=r"\d{1,3}(\.\d{1,5})?")
            money_i32(it["transactionAmount"], p + ".transactionAmount")
            money_i32(it["originalAmount"], p + ".originalAmount")
            money_i32(it["markupFee"], p + ".markupFee")
            if it["transactionAmount"]["currency"] != k["currency"]:
                raise fmt("must be the card account currency", p + ".transactionAmount.currency")
            ad = obj(it["cardAcceptorAddress"], p + ".cardAcceptorAddress", ("country",),
                     ("street", "buildingNumber", "postalCode", "city"))
            if "street" in ad:
                s(ad["street"], p + ".cardAcceptorAddress.street", maxlen=70)
            for f in ("buildingNumber", "postalCode", "city"):
                if f in ad:
                    s(ad[f], f"{p}.cardAcceptorAddress.{f}", maxlen=70)
            country(ad["country"], p + ".cardAcceptorAddress.country")
            if "currencyExchange" in it:
                cx = obj(it["currencyExchange"], p + ".currencyExchange",
                         ("sourceCurrency", "targetCurrency", "unitCurrency", "exchangeRate", "quotationDate"))
                for f in ("sourceCurrency", "targetCurrency", "unitCurrency"):
                    currency(cx[f], f"{p}.currencyExchange.{f}")
                s(cx["exchangeRate"], p + ".currencyExchange.exchangeRate", pattern=r"\d{1,13}(\.\d{1,10})?")
                parse_date(cx["quotationDate"], p + ".currencyExchange.quotationDate")
            check_dates(it["bookingDate"], it["transactionDate"], p + ".bookingDate", p + ".transactionDate")
            if it["maskedPan"] != k["maskedPan"]:
                raise bad(f"{p}.maskedPan does not belong to this card account")
            if it["cardTransactionId"] in ids:
                raise ApiError(409, "CONFLICT", f"{p}.cardTransactionId already exists")
            ids.add(it["cardTransactionId"])
            made.append(dict(it))
        ctx.world.card_tx[k["resourceId"]].extend(made)
        swap = "cardaccount-switch-originalamount-and-transactionamount" in ctx.fixes
        return 201, {"cardAccount": {"maskedPan": k["maskedPan"]},
                     "cardTransactions": {"booked": [card_tx_view(t, swap) for t in made], "pending": []}}, {}


def list_card_transactions(ctx, mockCardAccountId):
    only_query(ctx.query, ("bookingStatus", "fromDate", "toDate", "offset", "limit"))
    bs = ctx.query.get("bookingStatus")
    if bs is None:
        raise ApiError(400, "QUERY_PARAMETER_REQUIRED", "query parameter bookingStatus is required")
    if bs not in ("booked", "pending", "both"):
        raise ApiError(400, "FORMAT_ERROR", "bookingStatus must be booked, pending or both")
    fd, td = qdate(ctx.query, "fromDate"), qdate(ctx.query, "toDate")
    if fd and td and fd > td:
        raise ApiError(400, "FORMAT_ERROR", "fromDate is after toDate")
    with LOCK:
        k = _card(ctx, mockCardAccountId)
        txs = [t for t in ctx.world.card_tx[k["resourceId"]]
               if (not fd or t["bookingDate"] >= fd.isoformat()) and (not td or t["bookingDate"] <= td.isoformat())]
        swap = "cardaccount-switch-originalamount-and-transactionamount" in ctx.fixes
        booked = [card_tx_view(t, swap) for t in page(txs, ctx.query)] if bs != "pending" else []
        return 200, {"cardAccount": {"maskedPan": k["maskedPan"]},
                     "cardTransactions": {"booked": booked, "pending": []}}, {}


# ---------------------------------------------------------------- agreements / engagements
def eng_item(e):
    return {"id": e["id"], "customer": e["customer"], **({"name": e["name"]} if e.get("name") else {}),
            "account": {"bban": e["account"]["bban"], "iban": e["account"]["iban"]}, "roles": list(e["roles"]),
            "accessRights": "VIEW" in e["roles"] or "OWNER" in e["roles"],
            "paymentRights": "APPROVE" in e["roles"] or "REGISTER" in e["roles"],
            "transferRights": "INTERNAL_TRANSFER" in e["roles"] or "OWNER" in e["roles"],
            "registerLimit": e["registerLimit"], "approvalLimit": e["approvalLimit"]}


def eng_view(e):
    return {"customer": e["customer"], "account": {"iban": e["account"]["iban"]}, "roles": list(e["roles"]),
            "registerLimit": e["registerLimit"], "approvalLimit": e["approvalLimit"]}


def agreement_view(ag):
    v = {"id": ag["id"], "name": ag["name"]}
    if ag.get("owner"):
        v["owner"] = ag["owner"]
    v["engagements"] = [eng_item(e) for e in ag["engagements"]]
    v["_links"] = {"self": link(f"/v1/sandbox/agreements/{ag['id']}"),
                   "engagements": link(f"/v1/sandbox/agreements/{ag['id']}/engagements", "POST")}
    return v


def create_agreement(ctx):
    no_query(ctx)
    b = obj(ctx.body, "body", ("name",), ("owner",))
    s(b["name"], "name", maxlen=70)
    with LOCK:
        if "owner" in b:
            if not ctx.world.customers.get(s(b["owner"], "owner")):
                raise bad("owner is not a sandbox customer (customerId)")
        ag = {"id": new_id(), "name": b["name"], "owner": b.get("owner"), "engagements": []}
        ctx.world.agreements[ag["id"]] = ag
        return 201, agreement_view(ag), {"Location": f"/v1/sandbox/agreements/{ag['id']}"}


def _agreement(ctx, mockAgreementId):
    ag = ctx.world.agreements.get(mockAgreementId)
    if not ag:
        raise nf("agreement")
    return ag


def get_agreement(ctx, mockAgreementId):
    no_query(ctx)
    with LOCK:
        return 200, agreement_view(_agreement(ctx, mockAgreementId)), {}


def create_engagement(ctx, mockAgreementId):
    no_query(ctx)
    b = obj(ctx.body, "body", ("customer", "account", "roles", "registerLimit", "approvalLimit"))
    s(b["customer"], "customer")
    acc = obj(b["account"], "account", ("iban",))
    check_iban(acc["iban"], "account.iban")
    roles = b["roles"]
    if not isinstance(roles, list) or not roles:
        raise fmt("must be a non-empty array", "roles")
    for n, r in enumerate(roles):
        s(r, f"roles[{n}]", enum=set(ROLES))
    if len(set(roles)) != len(roles):
        raise fmt("a role is listed more than once", "roles")
    i32(b["registerLimit"], "registerLimit", minimum=0)
    i32(b["approvalLimit"], "approvalLimit", minimum=0)
    w = ctx.world
    with LOCK:
        ag = _agreement(ctx, mockAgreementId)
        owner = w.customers.get(ag.get("owner") or "")
        if not owner or owner["customerType"] != "CORPORATE":
            raise bad("engagements can only be added to an agreement owned by a corporate customer")
        cust = w.customers.get(b["customer"])
        if not cust or cust["customerType"] != "PRIVATE":
            raise bad("customer must be an existing PRIVATE sandbox customer (customerId)")
        a = w.account_by(iban=acc["iban"])
        if not a or a["customerNumber"] != owner["customerNumber"]:
            raise bad("the account must be owned by the agreement owner")
        for e in ag["engagements"]:
            if e["customer"] == cust["customerId"] and e["account"]["iban"] == a["iban"]:
                raise ApiError(409, "CONFLICT", "engagement already exists for this customer and account")
        e = {"id": new_id(), "customer": cust["customerId"], "name": a["accountName"],
             "account": {"bban": a["bban"], "iban": a["iban"]}, "roles": roles,
             "registerLimit": b["registerLimit"], "approvalLimit": b["approvalLimit"]}
        ag["engagements"].append(e)
        return 201, eng_view(e), {"Location": f"/v1/sandbox/agreements/{ag['id']}/engagements/{e['id']}"}


def get_engagement(ctx, mockAgreementId, mockEngagementId):
    no_query(ctx)
    with LOCK:
        ag = _agreement(ctx, mockAgreementId)
        for e in ag["engagements"]:
            if e["id"] == mockEngagementId:
                return 200, eng_view(e), {}
        raise nf("engagement")


def run_batch(ctx):
    no_query(ctx)
    if ctx.raw_body not in (b"", b"{}"):
        raise fmt("body must be empty")
    import payments
    n = payments.batch_run(ctx.world)
    return 200, {"processedPayments": n}, {}
