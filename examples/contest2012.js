// contest2012: a bot written against the 2012 contest's API (docs/bot-api-2012.md), as its authors wrote them.
// Puts its most expensive card that may go (a jack orders its most common suit), draws when it has none;
// each step waits for the card to land (onFinish) before it thinks again.
window.addEvent('domready', function () {
    Bridge.AI = new Class({
        Extends: Bridge.AIUtils,

        movement: function (first) {
            var cards = this.player.cards.filter(function (card) { return this.canPutCard(card); }, this);
            if (cards.length) {
                var best = cards.sort(function (a, b) { return b.getValue() - a.getValue(); })[0];
                if (best.rank == 'j') best.setRequireSuit(this.favouriteSuit(best));
                this.putCard(best, this.move.bind(this));   // once it is on the pile, think again
            } else if (!this.canFinishMove() && this.canGetCard()) {
                this.getCard(this.move.bind(this));         // the card drawn is in this.player.cards then
            } else {
                if (this.getPlayers().some(function (p) { return p.cards.length == 1; })) this.msg('последняя карта!');
                this.finishMove();
            }
        },

        favouriteSuit: function (jack) {
            var counts = {};
            this.player.cards.each(function (card) {
                if (card !== jack && card.rank != 'j') counts[card.suit] = (counts[card.suit] || 0) + 1;
            });
            var suits = Object.keys(counts);
            if (!suits.length) return jack.suit;
            return suits.sort(function (a, b) { return counts[b] - counts[a]; })[0];
        }
    });
});
