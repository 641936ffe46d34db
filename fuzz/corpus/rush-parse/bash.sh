declare -A map=([a]=1 [b]=2); arr=(x "y z" $'\t')
[[ ${#arr[@]} -gt 1 && $1 =~ ^[0-9]+$ ]] && echo "${arr[@]:1}"
for ((i = 0; i < 3; i++)); do echo $i; done
case $x in a|b*) :;; c) :;& *) ;;& esac; [[ $x == @(a|b)* && $y != !(c) ]]
coproc cat; exec {fd}>&-; cmd |& tee >(wc -l) <(echo in) 2>/dev/null
select s in a b; do break; done; time -p sleep 0
echo ${var//pat/rep} ${var^^} ${!ref} ${var@Q}
